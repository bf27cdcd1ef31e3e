"""Where notification links point: the console's address as people reach it.

NOTIFY_CONSOLE_URL when set (production must set it: `check --deploy` says so, see
notifications/checks.py; `make run` sets it from the port it serves on). Otherwise the
scheme and host of the last request a signed-in person made whose Host passed
ALLOWED_HOSTS (SeenOriginMiddleware records it), never a guessed port: a link to the
wrong port is worse than a path the reader completes. Nothing seen yet: the path alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from notifications.models import SeenOrigin

SEEN_ROW = 1
# A process writes the same origin again at most this often (seen_at stays roughly fresh;
# a request does not cost a write).
REWRITE_SECONDS = 600
_last_written: tuple[str, float] | None = None  # this process's last write


def console_url() -> str:
    """The base of links, without a trailing slash ("" when nothing is known)."""
    configured = str(settings.NOTIFY_CONSOLE_URL or "").strip()
    if configured:
        return configured.rstrip("/")
    seen = SeenOrigin.objects.filter(pk=SEEN_ROW).values_list("origin", flat=True).first()
    return (seen or "").rstrip("/")


def origin_seen(origin: str) -> bool:
    """Record `origin` as how the console is reached; True when it was written."""
    global _last_written
    now = time.monotonic()
    if _last_written is not None:
        last_origin, last_at = _last_written
        if last_origin == origin and now - last_at < REWRITE_SECONDS:
            return False
    try:
        SeenOrigin.objects.update_or_create(
            pk=SEEN_ROW, defaults={"origin": origin[:300], "seen_at": timezone.now()}
        )
    except DatabaseError:
        return False  # a busy SQLite file: the next request tries again
    _last_written = (origin, now)
    return True


def request_origin(request: HttpRequest) -> str | None:
    """scheme://host[:port] of a request whose Host ALLOWED_HOSTS accepts, else None."""
    try:
        host = request.get_host()
    except DisallowedHost:
        return None
    return f"{request.scheme}://{host}"


class SeenOriginMiddleware:
    """Remember how signed-in people reach the console, for links in notifications,
    while NOTIFY_CONSOLE_URL is unset. After the view: an API token's user is known
    only then (REST framework authenticates in the view)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.NOTIFY_CONSOLE_URL:
            return response
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and response.status_code < 400:
            origin = request_origin(request)
            if origin is not None:
                origin_seen(origin)
        return response
