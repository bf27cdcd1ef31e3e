"""The tests' handle on the running provider: set a user's password and groups, and make
the next ID tokens bad. JSON over HTTP on loopback, allowed only with the control token
the test passed at start (OIDC_PROVIDER_CONTROL_TOKEN)."""

import hmac
import json
import os

from django.contrib.auth.models import Group, User
from django.http import HttpResponseForbidden, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

TAMPER_MODES = ("", "audience", "signature")
_state = {"tamper": ""}  # one provider process per test module; runserver threads share it


def tamper_mode() -> str:
    return _state["tamper"]


def _allowed(request) -> bool:
    sent = request.headers.get("X-Control-Token", "")
    return hmac.compare_digest(sent, os.environ["OIDC_PROVIDER_CONTROL_TOKEN"])


@csrf_exempt
@require_POST
def user_put(request):
    """{"username", "password", "groups": [...], "email"?} -> {"sub"}: creates or
    updates the user; their groups become exactly `groups`."""
    if not _allowed(request):
        return HttpResponseForbidden("control token")
    body = json.loads(request.body)
    user, _ = User.objects.get_or_create(username=body["username"])
    user.set_password(body["password"])
    user.email = body.get("email", f"{body['username']}@example.test")
    user.save()
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in body["groups"]])
    return JsonResponse({"sub": str(user.pk)})


@csrf_exempt
@require_POST
def tamper_put(request):
    """{"mode": "" | "audience" | "signature"}: how the next ID tokens are spoiled."""
    if not _allowed(request):
        return HttpResponseForbidden("control token")
    mode = json.loads(request.body)["mode"]
    if mode not in TAMPER_MODES:
        return JsonResponse({"error": f"mode must be one of {TAMPER_MODES}"}, status=400)
    _state["tamper"] = mode
    return JsonResponse({"mode": mode})
