"""Each viewer reads the console in their language and time zone.

Language: the user's saved preference (in the session since login), else what
LocaleMiddleware found (the switcher's cookie, else Accept-Language). Time zone: UTC when
the viewer toggled it, else the browser's zone (a cookie console.js keeps current), else
settings.TIME_ZONE. URLs never change with either. The JSON API (/api/) is English.
"""

import zoneinfo
from datetime import tzinfo

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone, translation

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


def viewer_zone(request: HttpRequest) -> tzinfo:
    if wants_utc(request):
        return zoneinfo.ZoneInfo("UTC")
    return browser_zone(request) or zoneinfo.ZoneInfo(settings.TIME_ZONE)


class ViewerMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        if request.path.startswith(API_PREFIX):
            # The JSON API speaks one language (English), whatever the caller's browser:
            # programs parse its messages, and its texts match the stored ones.
            translation.activate(settings.LANGUAGE_CODE)
            request.LANGUAGE_CODE = settings.LANGUAGE_CODE
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
