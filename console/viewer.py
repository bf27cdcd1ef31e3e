"""Each viewer reads the console in their language and time zone.

Language: the user's saved preference (in the session since login), else what
LocaleMiddleware found (the switcher's cookie, else Accept-Language). Time zone: UTC when
the viewer toggled it, else the browser's zone (a cookie console.js keeps current), else
settings.TIME_ZONE. URLs never change with either. The JSON API (/api/) answers in the
language its request names (`Accept-Language`, or `?lang=`), else English: never a saved
preference or a cookie, so a program gets the same words from every session.
"""

import zoneinfo
from datetime import tzinfo

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone, translation
from django.utils.translation.trans_real import parse_accept_lang_header

from console.login_lockout import API_PREFIX
from console.preferences.services import SESSION_LANGUAGE, SESSION_UTC, supported_language

TZ_COOKIE = "console_tz"
UTC_COOKIE = "console_utc"
_TZ_NAME_MAX = 64


def browser_zone(request: HttpRequest) -> tzinfo | None:
    """The zone console.js put in its cookie, if it is a real IANA name."""
    name = request.COOKIES.get(TZ_COOKIE, "")
    if not name or len(name) > _TZ_NAME_MAX:
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None  # made up, or a path: ignored, never an error page


def wants_utc(request: HttpRequest) -> bool:
    session = getattr(request, "session", None)
    if session is not None and SESSION_UTC in session:
        return bool(session[SESSION_UTC])
    return request.COOKIES.get(UTC_COOKIE) == "1"


def api_language(request: HttpRequest) -> str:
    """The language an API request names: `?lang=`, else the best of Accept-Language the
    console has, else English (settings.LANGUAGE_CODE)."""
    asked = request.GET.get("lang", "")
    if asked:
        try:
            return translation.get_supported_language_variant(asked)
        except LookupError:
            return settings.LANGUAGE_CODE
    for code, _quality in parse_accept_lang_header(request.headers.get("accept-language", "")):
        if code == "*":
            break
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


def viewer_zone(request: HttpRequest) -> tzinfo:
    if wants_utc(request):
        return zoneinfo.ZoneInfo("UTC")
    return browser_zone(request) or zoneinfo.ZoneInfo(settings.TIME_ZONE)


class ViewerMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        if request.path.startswith(API_PREFIX):
            # The language the request names, never a cookie or a saved preference: the
            # same call gives a program the same words whoever's session it borrows.
            language = api_language(request)
            translation.activate(language)
            request.LANGUAGE_CODE = language
            return self.get_response(request)
        session = getattr(request, "session", None)
        saved = session.get(SESSION_LANGUAGE) if session is not None else None
        if saved and supported_language(saved):
            translation.activate(saved)
            request.LANGUAGE_CODE = translation.get_language()
        zone = viewer_zone(request)
        request.viewer_zone = zone  # type: ignore[attr-defined]
        timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
