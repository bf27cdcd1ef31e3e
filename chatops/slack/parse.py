"""A verified Slack request -> ChatRequest. Slash commands come as a form; button
presses and modal submissions as a form field `payload` holding JSON (block_actions,
view_submission). Every field read is checked and a bad one named (RequestRefused 400),
a payload from another Slack workspace is refused (403), and a response_url that is not
Slack's is dropped (the reply then goes through the Web API instead).

The key that makes a retry or a replay the same request: the trigger id Slack gives every
command and press; a modal submission's view id and hash; else a digest of the body."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from chatops.commands import command_parse
from chatops.models import InteractionKind, Surface, Workspace
from chatops.refusals import RequestRefused
from chatops.requests import ChatRequest
from chatops.slack.render import LINK_ACTION, METADATA_ACTION, METADATA_VALUE

SLACK_HOOKS_HOST = "hooks.slack.com"
RETRY_HEADER = "x-slack-retry-num"
_ACTION = re.compile(r"^[a-z][a-z_]{0,31}$")
_KEY_MAX = 200


def _form(body: bytes) -> dict[str, str]:
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise RequestRefused("the body is not UTF-8", status=400) from None
    return {name: values[0] for name, values in fields.items()}


def _text(data: Mapping[str, Any], name: str, where: str = "", *, required: bool = True) -> str:
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise RequestRefused(f"missing {where}{name}", status=400)
        return ""
    if not isinstance(value, str | int):
        raise RequestRefused(f"{where}{name} is not a string", status=400)
    return str(value)[:_KEY_MAX]


def _obj(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A nested object, or {} when it is absent or not an object."""
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def _retry(headers: Mapping[str, str]) -> int:
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}
    raw = lowered.get(RETRY_HEADER, "").strip()
    if not raw:
        return 0
    if not raw.isdigit():
        raise RequestRefused("X-Slack-Retry-Num is not a number", status=400)
    return int(raw)


def _team_check(workspace: Workspace, team: str) -> None:
    if workspace.external_team and team != workspace.external_team:
        raise RequestRefused(
            f"this request comes from Slack team {team or '(none)'}, not this workspace's",
            status=403,
        )


def reply_url_check(workspace: Workspace, url: str) -> str:
    """`url` when Slack may have made it (https on hooks.slack.com, or the host of the
    workspace's API address: the local test server); "" otherwise."""
    if not url:
        return ""
    try:
        parts, api = urlsplit(url), urlsplit(workspace.api_url)
        port, api_port = parts.port, api.port
    except ValueError:
        return ""
    if parts.scheme == "https" and parts.hostname == SLACK_HOOKS_HOST and port in (None, 443):
        return url
    same = (parts.scheme, parts.hostname, port) == (api.scheme, api.hostname, api_port)
    return url if same and parts.hostname != SLACK_HOOKS_HOST else ""


def _digest(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


def _incident(value: Mapping[str, Any], where: str) -> int | None:
    raw = value.get("incident")
    if raw in (None, ""):
        return None
    if isinstance(raw, bool) or not (isinstance(raw, int) or str(raw).isdigit()):
        raise RequestRefused(f"{where}.incident is not an incident id", status=400)
    return int(raw)


def command_request(workspace: Workspace, headers: Mapping[str, str], body: bytes) -> ChatRequest:
    """A slash command (`/incident <text>`); its text parsed by chatops.commands
    (CommandError, the user's mistake, is left to the view to answer)."""
    form = _form(body)
    _text(form, "command")
    _team_check(workspace, _text(form, "team_id"))
    action, args = command_parse(form.get("text", ""))
    trigger = _text(form, "trigger_id", required=False)
    return ChatRequest(
        surface=Surface.SLACK,
        workspace_id=workspace.pk,
        kind=InteractionKind.COMMAND,
        key=trigger or _digest(body),
        external_user=_text(form, "user_id"),
        external_name=_text(form, "user_name", required=False),
        action=action,
        incident_id=_incident(args, "text"),
        args=args,
        channel=_text(form, "channel_id", required=False),
        reply_url=reply_url_check(workspace, form.get("response_url", "")),
        trigger=trigger,
        retry=_retry(headers),
    )


def interaction_request(
    workspace: Workspace, headers: Mapping[str, str], body: bytes
) -> ChatRequest | None:
    """A button press or a modal submission; None for what needs only an answer (the
    "View in console" link button, a modal closed)."""
    raw = _form(body).get("payload")
    if not raw:
        raise RequestRefused("missing the payload field", status=400)
    try:
        payload = json.loads(raw)
    except ValueError:
        raise RequestRefused("payload is not JSON", status=400) from None
    if not isinstance(payload, dict):
        raise RequestRefused("payload is not a JSON object", status=400)
    team = _obj(payload, "team")
    user = payload.get("user")
    if not isinstance(user, dict):
        raise RequestRefused("missing payload.user", status=400)
    _team_check(workspace, str(team.get("id") or user.get("team_id") or ""))
    kind = payload.get("type")
    if kind == "block_actions":
        return _block_actions(workspace, headers, body, payload, user)
    if kind == "view_submission":
        return _view_submission(workspace, headers, body, payload, user)
    if kind == "view_closed":
        return None
    raise RequestRefused(f"payload.type {str(kind)[:40]!r} is not handled here", status=400)


def _action_name(raw: str, where: str) -> str:
    if not _ACTION.match(raw):
        raise RequestRefused(f"{where} names no action", status=400)
    return raw


def _block_actions(
    workspace: Workspace,
    headers: Mapping[str, str],
    body: bytes,
    payload: dict[str, Any],
    user: dict[str, Any],
) -> ChatRequest | None:
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        raise RequestRefused("missing payload.actions[0]", status=400)
    pressed = actions[0]
    action_id = _text(pressed, "action_id", "payload.actions[0].")
    if action_id.split(":", 1)[0] == LINK_ACTION:
        return None  # Slack opens the link itself; it only wants the answer
    action = _action_name(action_id.split(":", 1)[0], "payload.actions[0].action_id")
    try:
        value = json.loads(pressed.get("value") or "{}")
    except ValueError:
        raise RequestRefused("payload.actions[0].value is not JSON", status=400) from None
    if not isinstance(value, dict):
        raise RequestRefused("payload.actions[0].value is not a JSON object", status=400)
    container = _obj(payload, "container")
    channel = _obj(payload, "channel")
    trigger = _text(payload, "trigger_id", "payload.", required=False)
    return ChatRequest(
        surface=Surface.SLACK,
        workspace_id=workspace.pk,
        kind=InteractionKind.BUTTON,
        key=trigger or _digest(body),
        external_user=_text(user, "id", "payload.user."),
        external_name=str(user.get("username") or user.get("name") or "")[:100],
        action=action,
        incident_id=_incident(value, "payload.actions[0].value"),
        args=value,
        channel=str(container.get("channel_id") or channel.get("id") or "")[:64],
        thread=str(container.get("message_ts") or "")[:64],
        reply_url=reply_url_check(workspace, str(payload.get("response_url") or "")),
        trigger=trigger,
        retry=_retry(headers),
    )


def _view_submission(
    workspace: Workspace,
    headers: Mapping[str, str],
    body: bytes,
    payload: dict[str, Any],
    user: dict[str, Any],
) -> ChatRequest:
    view = payload.get("view")
    if not isinstance(view, dict):
        raise RequestRefused("missing payload.view", status=400)
    view_id = _text(view, "id", "payload.view.")
    try:
        meta = json.loads(view.get("private_metadata") or "")
    except ValueError:
        raise RequestRefused("payload.view.private_metadata is not JSON", status=400) from None
    if not isinstance(meta, dict) or not isinstance(meta.get(METADATA_VALUE, {}), dict):
        raise RequestRefused("payload.view.private_metadata is not ours", status=400)
    action = _action_name(str(meta.get(METADATA_ACTION, "")), "payload.view.private_metadata")
    value: dict[str, Any] = dict(meta.get(METADATA_VALUE, {}))
    args = {**value, **_inputs(view)}
    trigger = _text(payload, "trigger_id", "payload.", required=False)
    view_hash = str(view.get("hash") or "")
    return ChatRequest(
        surface=Surface.SLACK,
        workspace_id=workspace.pk,
        kind=InteractionKind.DIALOG,
        key=f"view:{view_id}:{view_hash}"[:_KEY_MAX] if view_hash else _digest(body),
        external_user=_text(user, "id", "payload.user."),
        external_name=str(user.get("username") or user.get("name") or "")[:100],
        action=action,
        incident_id=_incident(value, "payload.view.private_metadata.value"),
        args=args,
        channel=str(value.get("channel") or "")[:64],
        thread=str(value.get("thread") or "")[:64],
        trigger=trigger,
        retry=_retry(headers),
    )


def _inputs(view: dict[str, Any]) -> dict[str, str]:
    """The modal's inputs by name (block_id and action_id are the input's name)."""
    values = _obj(_obj(view, "state"), "values")
    inputs: dict[str, str] = {}
    for block_id, elements in values.items():
        if not isinstance(elements, dict):
            raise RequestRefused(f"payload.view.state.values.{block_id} is not an object", 400)
        element = elements.get(block_id)
        if isinstance(element, dict):
            inputs[str(block_id)] = str(element.get("value") or "")
    return inputs
