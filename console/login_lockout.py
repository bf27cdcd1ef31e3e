"""What django-axes calls when a username + address pair is locked out, and how it finds
the client's address (settings: AXES_LOCKOUT_CALLABLE, AXES_CLIENT_IP_CALLABLE).

The counting, the cool-off, the audit log and the admin unlock are axes' own; this module
only words the answer: a page for people, JSON for the API, both saying when to retry.
"""

from datetime import datetime, timedelta

from axes.helpers import get_cool_off
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

API_PREFIX = "/api/"


def _minutes(delta: timedelta) -> str:
    minutes = max(1, round(delta.total_seconds() / 60))
    return ngettext("%(n)s minute", "%(n)s minutes", minutes) % {"n": minutes}


def _message(cool_off: timedelta, retry_at: datetime) -> str:
    """The refusal in the active language."""
    if cool_off:
        when = _("Try again after %(time)s (in %(wait)s)") % {
            "time": f"{retry_at:%H:%M %Z}",
            "wait": _minutes(cool_off),
        }
    else:
        when = _("Try again once an admin has unlocked it")
    return _(
        "Too many failed logins for this username from your address. %(when)s, "
        "or ask a console admin to unlock it."
    ) % {"when": when}


def lockout_response(request: HttpRequest, original_response=None, credentials=None):
    """A 429 that says when the pair may try again (Retry-After too)."""
    cool_off = get_cool_off(request) or timedelta(0)
    # Every failure during a lockout restarts the cool-off, so it runs from this attempt.
    since = getattr(request, "axes_attempt_time", None) or timezone.now()
    retry_at = timezone.localtime(since + cool_off)
    seconds = int(cool_off.total_seconds())
    response: HttpResponse
    if request.path.startswith(API_PREFIX):
        with translation.override(None):  # the API speaks English
            message = _message(cool_off, retry_at)
        response = JsonResponse(
            {"detail": message, "code": "locked_out", "retry_after_seconds": seconds},
            status=429,
        )
    else:
        context = {
            "message": _message(cool_off, retry_at),
            "retry_at": retry_at if cool_off else None,
            "cool_off": _minutes(cool_off) if cool_off else None,
        }
        response = render(request, "registration/locked_out.html", context, status=429)
    if seconds:
        response["Retry-After"] = str(seconds)
    return response


def client_ip(request: HttpRequest) -> str | None:
    """The socket address, or behind TRUSTED_PROXY_COUNT proxies that each append to
    X-Forwarded-For, the entry that many places from the right (entries further left
    are whatever the client sent, so they are never trusted)."""
    count = settings.LOGIN_TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if count > 0 and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if len(hops) >= count:
            return hops[-count]
    return request.META.get("REMOTE_ADDR")
