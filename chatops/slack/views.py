"""What Slack calls (chatops/urls.py: slack/<workspace>/commands/ and interactions/):
the slash command's request URL and the interactivity request URL. Each reads the raw
body once, verifies Slack's signature (verify.py), parses (parse.py), records the request
(chatops.services.interactions.interaction_receive: a retry or a replay finds the
recorded one and does nothing more) and answers at once, well within Slack's 3 s; the
work runs on the worker.

Machine-to-machine: no session, no CSRF. A refusal is JSON {"error": ...} with its status
(401 unsigned, forged or stale; 403 another Slack team; 400 malformed; 404 no such
enabled Slack workspace; 413 a body over 1 MB): bad input never makes a 5xx."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from chatops.commands import CommandError
from chatops.models import Surface, Workspace
from chatops.refusals import RequestRefused
from chatops.services.interactions import interaction_receive
from chatops.slack.parse import command_request, interaction_request
from chatops.slack.verify import slack_request_verify

log = logging.getLogger("chatops.slack")
BODY_MAX_BYTES = 1024 * 1024


def _workspace(pk: int) -> Workspace:
    workspace = Workspace.objects.filter(pk=pk, enabled=True, surface=Surface.SLACK).first()
    if workspace is None:
        raise RequestRefused(f"no enabled Slack workspace {pk}", status=404)
    return workspace


def _body(request: HttpRequest) -> bytes:
    """The raw body, once (the signature is over these exact bytes)."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise RequestRefused("Content-Length is not a number", status=400) from None
    if declared > BODY_MAX_BYTES:
        raise RequestRefused(f"body is larger than {BODY_MAX_BYTES} bytes", status=413)
    body = request.read(BODY_MAX_BYTES + 1)
    if len(body) > BODY_MAX_BYTES:
        raise RequestRefused(f"body is larger than {BODY_MAX_BYTES} bytes", status=413)
    return body


def _refused(pk: int, exc: RequestRefused) -> JsonResponse:
    log.info("slack workspace %s: refused (%s): %s", pk, exc.status, exc.message)
    return JsonResponse({"error": exc.message}, status=exc.status)


@csrf_exempt
@require_POST
@never_cache
def commands(request: HttpRequest, workspace: int) -> HttpResponse:
    """The slash command: answered at once with the receipt's text, only to its sender."""
    try:
        found = _workspace(workspace)
        body = _body(request)
        slack_request_verify(found, request.headers, body)
        # Answered now (the grammar's mistakes) in the workspace's language: who the
        # person is in the console is learned on the worker.
        with translation.override(found.language):
            try:
                chat_request = command_request(found, request.headers, body)
            except CommandError as exc:
                return JsonResponse({"response_type": "ephemeral", "text": exc.translated()})
        receipt = interaction_receive(request=chat_request)
    except RequestRefused as exc:
        return _refused(workspace, exc)
    if not receipt.ack_text:
        return HttpResponse(status=200)
    return JsonResponse({"response_type": "ephemeral", "text": receipt.ack_text})


@csrf_exempt
@require_POST
@never_cache
def interactions(request: HttpRequest, workspace: int) -> HttpResponse:
    """Button presses and modal submissions: an empty 200 (for a modal, it closes it)."""
    try:
        found = _workspace(workspace)
        body = _body(request)
        slack_request_verify(found, request.headers, body)
        chat_request = interaction_request(found, request.headers, body)
        if chat_request is not None:
            interaction_receive(request=chat_request)
    except RequestRefused as exc:
        return _refused(workspace, exc)
    return HttpResponse(status=200)
