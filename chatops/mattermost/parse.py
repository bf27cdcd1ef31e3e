"""What Mattermost POSTs, turned into a ChatRequest: a slash command (a form), an
integration action (a button press, JSON) or a dialog submission (JSON). Every field is
checked and a bad one named (RequestRefused 400); a request from another team is refused
(403). Buttons and dialogs are verified here too (chatops/mattermost/verify.py), since
what they ask for is inside their signed context or state.

Keys: Mattermost's trigger ids run past 200 characters (a signed, base64 blob), so the
key is "mm:" + the SHA-256 of the trigger id (unique per press or command: a replay
carries the same one), else of the whole body; a dialog submission carries no trigger
id, so its key digests its state, its user and what was submitted.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import parse_qs

from chatops.commands import command_parse
from chatops.mattermost.verify import action_context_verify, dialog_state_verify
from chatops.models import InteractionKind, Surface, Workspace
from chatops.refusals import RequestRefused
from chatops.requests import ChatRequest

ID_MAX_CHARS = 64  # ChatIdentity.external_user, ChatThread.channel
SUBMISSION_MAX_FIELDS = 20


def form_fields(body: bytes) -> dict[str, str]:
    """A slash command's urlencoded form (the first value of each field)."""
    try:
        text = body.decode("utf-8")
        parsed = parse_qs(text, keep_blank_values=True, strict_parsing=False, max_num_fields=50)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RequestRefused(message=f"the form is not readable: {exc}", status=400) from None
    return {name: values[0] for name, values in parsed.items() if values}


def json_object(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise RequestRefused(message="the body is not JSON", status=400) from None
    if not isinstance(data, dict):
        raise RequestRefused(message="the body is not a JSON object", status=400)
    return data


def _digest(*parts: Any) -> str:
    raw = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return "mm:" + hashlib.sha256(raw.encode()).hexdigest()


def _text(data: dict[str, Any], name: str, *, required: bool = True, limit: int = 0) -> str:
    value = data.get(name, "")
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise RequestRefused(message=f"field {name!r} must be a string", status=400)
    if required and not value:
        raise RequestRefused(message=f"missing field {name!r}", status=400)
    if limit and len(value) > limit:
        raise RequestRefused(
            message=f"field {name!r} is longer than {limit} characters", status=400
        )
    return value


def _team_check(workspace: Workspace, data: dict[str, Any]) -> None:
    team = _text(data, "team_id", required=bool(workspace.external_team), limit=ID_MAX_CHARS)
    if workspace.external_team and team != workspace.external_team:
        raise RequestRefused(
            message="this request comes from another Mattermost team than the workspace's",
            status=403,
        )


def _incident(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def command_request(workspace: Workspace, form: dict[str, str], body: bytes) -> ChatRequest:
    """A slash command (its token already checked). Raises CommandError (chatops.commands)
    for text the grammar does not know: the view answers it to the user, not as a 400."""
    _team_check(workspace, form)
    user = _text(form, "user_id", limit=ID_MAX_CHARS)
    channel = _text(form, "channel_id", limit=ID_MAX_CHARS)
    trigger = _text(form, "trigger_id", required=False)
    action, args = command_parse(_text(form, "text", required=False))
    return ChatRequest(
        surface=Surface.MATTERMOST,
        workspace_id=workspace.pk,
        kind=InteractionKind.COMMAND,
        key=_digest(trigger) if trigger else _digest(body.decode("utf-8", "replace")),
        external_user=user,
        external_name=_text(form, "user_name", required=False, limit=200),
        action=action,
        incident_id=_incident(args.get("incident")),
        args=args,
        channel=channel,
        trigger=trigger,
    )


def action_request(workspace: Workspace, body: bytes) -> ChatRequest:
    """A button press: its context verified, then its fields."""
    data = json_object(body)
    _team_check(workspace, data)
    action, value = action_context_verify(workspace, data.get("context"))
    trigger = _text(data, "trigger_id", required=False)
    return ChatRequest(
        surface=Surface.MATTERMOST,
        workspace_id=workspace.pk,
        kind=InteractionKind.BUTTON,
        key=_digest(trigger) if trigger else _digest(body.decode("utf-8", "replace")),
        external_user=_text(data, "user_id", limit=ID_MAX_CHARS),
        external_name=_text(data, "user_name", required=False, limit=200),
        action=action,
        incident_id=_incident(value.get("incident")),
        args=value,
        channel=_text(data, "channel_id", required=False, limit=ID_MAX_CHARS),
        thread=_text(data, "post_id", required=False, limit=ID_MAX_CHARS),
        trigger=trigger,
    )


def dialog_cancelled(data: dict[str, Any]) -> bool:
    return data.get("cancelled") is True


def dialog_request(workspace: Workspace, data: dict[str, Any]) -> ChatRequest:
    """A dialog submitted: its state verified. The signed value wins over a submitted
    field of the same name (a person types inputs, never the incident or the run)."""
    if data.get("type") != "dialog_submission":
        raise RequestRefused(message="field 'type' must be 'dialog_submission'", status=400)
    _team_check(workspace, data)
    state = data.get("state")
    action, value = dialog_state_verify(workspace, state)
    user = _text(data, "user_id", limit=ID_MAX_CHARS)
    submission = data.get("submission") or {}
    if not isinstance(submission, dict) or len(submission) > SUBMISSION_MAX_FIELDS:
        raise RequestRefused(message="field 'submission' must be an object", status=400)
    inputs: dict[str, Any] = {}
    for name, given in submission.items():
        if given is not None and not isinstance(given, str | int | float | bool):
            raise RequestRefused(message=f"submission field {name!r} is not a value", status=400)
        inputs[str(name)] = "" if given is None else given
    return ChatRequest(
        surface=Surface.MATTERMOST,
        workspace_id=workspace.pk,
        kind=InteractionKind.DIALOG,
        key=_digest(state, user, inputs),
        external_user=user,
        external_name=_text(data, "user_name", required=False, limit=200),
        action=action,
        incident_id=_incident(value.get("incident")),
        args={**inputs, **value},
        channel=_text(data, "channel_id", required=False, limit=ID_MAX_CHARS),
    )
