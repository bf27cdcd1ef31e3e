"""The header's language switcher and UTC toggle. Both work signed out too (the login
page has the switcher): then only a cookie remembers the choice."""

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from console.errors import DomainError
from console.preferences.services import preference_set, preference_to_session, supported_language
from console.viewer import UTC_COOKIE


def _back(request: HttpRequest) -> HttpResponseRedirect:
    target = request.POST.get("next") or request.headers.get("referer") or "/"
    safe = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return HttpResponseRedirect(target if safe else "/")


def _cookie(response: HttpResponse, name: str, value: str) -> None:
    if not value:
        response.delete_cookie(name, samesite="Lax")
        return
    response.set_cookie(
        name,
        value,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        samesite="Lax",  # as settings.LANGUAGE_COOKIE_SAMESITE
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=True,
    )


def _saved_for_account(code: str) -> str:
    if not code:
        return _(
            "Language: following each browser again. This applies to your account, so your "
            "other signed-in sessions follow their browser from their next page too."
        )
    return _(
        "Language saved to your account: %(language)s. Your other signed-in sessions (other "
        "browsers, your phone) switch to it from their next page too."
    ) % {"language": translation.get_language_info(code)["name_local"]}


@require_POST
def language_set(request: HttpRequest) -> HttpResponse:
    """`language`: a code of settings.LANGUAGES, or empty to follow the browser again."""
    code = request.POST.get("language", "")
    if code and not supported_language(code):
        choices = ", ".join(c for c, _name in settings.LANGUAGES)
        return HttpResponseBadRequest(
            _("Unknown language %(code)s; choose one of %(choices)s.")
            % {"code": repr(code)[:40], "choices": choices},
            content_type="text/plain; charset=utf-8",
        )
    if request.user.is_authenticated:
        try:
            pref = preference_set(user=request.user, language=code)
        except DomainError as exc:  # pragma: no cover - checked above
            return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
        preference_to_session(request, pref)
        # The choice is the account's, not this browser's: say so, in the new language.
        with translation.override(code or translation.get_language()):
            messages.info(request, _saved_for_account(code))
    response = _back(request)
    _cookie(response, settings.LANGUAGE_COOKIE_NAME, code)
    return response


@require_POST
def utc_set(request: HttpRequest) -> HttpResponse:
    """`utc`: "1" shows every time in UTC, "0" in the browser's time zone."""
    raw = request.POST.get("utc", "")
    if raw not in ("0", "1"):
        return HttpResponseBadRequest(
            _("utc must be 0 or 1."), content_type="text/plain; charset=utf-8"
        )
    on = raw == "1"
    if request.user.is_authenticated:
        preference_to_session(request, preference_set(user=request.user, show_utc=on))
    response = _back(request)
    _cookie(response, UTC_COOKIE, "1" if on else "")
    return response
