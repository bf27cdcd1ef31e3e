"""What Mattermost calls: the slash command, the buttons' integration actions and the
dialogs' submissions (chatops/urls.py: mattermost/<workspace>/commands|actions|dialogs/).
Each verifies (the command's token, the signed context or state), parses, records the
request (chatops.services.interactions.interaction_receive: a replay finds the recorded
one and does nothing) and answers at once; the work runs on the worker.

Machine-to-machine: no session, no CSRF. Every refusal is JSON {"error": ...} with its
status (401 unverified, 403 another team, 400 malformed, 404 no such workspace, 413 a body
over 1 MB); bad input never makes a 5xx.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, JsonResponse
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from chatops.commands import CommandError
from chatops.mattermost.parse import (
    action_request,
    command_request,
    dialog_cancelled,
    dialog_request,
    form_fields,
    json_object,
)
from chatops.mattermost.verify import command_token_check
from chatops.models import Surface, Workspace
from chatops.refusals import RequestRefused
from chatops.services.interactions import interaction_receive

BODY_MAX_BYTES = 1024 * 1024

Handler = Callable[[Workspace, bytes], JsonResponse]


def _workspace(pk: int) -> Workspace:
    workspace = Workspace.objects.filter(pk=pk, enabled=True, surface=Surface.MATTERMOST).first()
    if workspace is None:
        raise RequestRefused(message=f"no enabled Mattermost workspace {pk}", status=404)
    return workspace


def _body(request: HttpRequest) -> bytes:
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise RequestRefused(message="Content-Length is not a number", status=400) from None
    if declared > BODY_MAX_BYTES:
        raise RequestRefused(message=f"body is larger than {BODY_MAX_BYTES} bytes", status=413)
    body = request.read(BODY_MAX_BYTES + 1)
    if len(body) > BODY_MAX_BYTES:
        raise RequestRefused(message=f"body is larger than {BODY_MAX_BYTES} bytes", status=413)
    return body


def _serve(request: HttpRequest, pk: int, handler: Handler) -> JsonResponse:
    try:
        workspace = _workspace(pk)
        body = _body(request)
        # What is answered at once (a command the grammar does not know) is in the
        # workspace's language: who the person is in the console is learned on the worker.
        with translation.override(workspace.language):
            return handler(workspace, body)
    except RequestRefused as exc:
        return JsonResponse({"error": exc.message}, status=exc.status)


def _command(workspace: Workspace, body: bytes) -> JsonResponse:
    form = form_fields(body)
    command_token_check(workspace, form.get("token", ""))
    try:
        chat_request = command_request(workspace, form, body)
    except CommandError as exc:
        return JsonResponse({"response_type": "ephemeral", "text": exc.translated()})
    receipt = interaction_receive(request=chat_request)
    return JsonResponse({"response_type": "ephemeral", "text": receipt.ack_text})


def _action(workspace: Workspace, body: bytes) -> JsonResponse:
    receipt = interaction_receive(request=action_request(workspace, body))
    return JsonResponse({"ephemeral_text": receipt.ack_text} if receipt.ack_text else {})


def _dialog(workspace: Workspace, body: bytes) -> JsonResponse:
    data = json_object(body)
    if dialog_cancelled(data):  # only sent when notify_on_cancel, which is off: nothing to do
        return JsonResponse({})
    interaction_receive(request=dialog_request(workspace, data))
    return JsonResponse({})  # an empty answer closes the dialog


@csrf_exempt  # machine-to-machine: verified by the command's token, no cookies
@require_POST
@never_cache
def commands(request: HttpRequest, workspace: int) -> JsonResponse:
    return _serve(request, workspace, _command)


@csrf_exempt  # verified by the signed context
@require_POST
@never_cache
def actions(request: HttpRequest, workspace: int) -> JsonResponse:
    return _serve(request, workspace, _action)


@csrf_exempt  # verified by the signed state
@require_POST
@never_cache
def dialogs(request: HttpRequest, workspace: int) -> JsonResponse:
    return _serve(request, workspace, _dialog)
