"""POST /api/v1/pager/heartbeats/<slug>/beat: an HTTP check-in (a cron job, a batch
pipeline, a synthetic probe). A plain Django view, like the Alertmanager webhook: it is
machine-to-machine, authenticated by the heartbeat's own bearer token, so no session,
no CSRF, no API-token machinery; every answer is JSON with a message."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from console.errors import NotFound
from pager.heartbeats.services import HeartbeatTokenRefused, heartbeat_beat


def _error(status: int, message: str) -> JsonResponse:
    return JsonResponse({"ok": False, "error": message}, status=status)


def _bearer(request: HttpRequest) -> str | None:
    scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
    token = presented.strip()
    return token if scheme.lower() == "bearer" and token else None


@csrf_exempt  # machine-to-machine, authenticated by the bearer token, no cookies
@never_cache
def heartbeat_beat_view(request: HttpRequest, slug: str) -> JsonResponse:
    if request.method != "POST":
        response = _error(405, f"only POST is allowed, not {(request.method or '')[:10]}")
        response["Allow"] = "POST"
        return response
    token = _bearer(request)
    if token is None:
        return _error(401, "send the heartbeat's token as 'Authorization: Bearer <token>'")
    try:
        next_due = heartbeat_beat(slug=slug, token=token)
    except NotFound:
        return _error(404, f"no heartbeat is called {slug[:100]!r}")
    except HeartbeatTokenRefused:
        return _error(401, "wrong token for this heartbeat")
    return JsonResponse({"ok": True, "next_due": next_due.isoformat()})
