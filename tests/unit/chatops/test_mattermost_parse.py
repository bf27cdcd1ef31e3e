"""Mattermost's requests verified and parsed (no database: unsaved workspaces)."""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import pytest
from django.core import signing

from chatops.mattermost import parse, verify
from chatops.mattermost.render import dialog_body, post_body
from chatops.messages import Button, Dialog, Input, Message
from chatops.models import InteractionKind, Surface, Workspace
from chatops.refusals import RequestRefused
from chatops.transport import TransportError
from tests.chat_mattermost_server import (
    COMMAND_TOKEN,
    TEAM,
    action_payload,
    dialog_submission,
    slash_command_form,
)

pytest_plugins = ["tests.chat_mattermost_server"]


def workspace(**fields: object) -> Workspace:
    values: dict[str, object] = {
        "pk": 3, "name": "mm", "surface": Surface.MATTERMOST, "api_url": "https://mm.example.com",
        "bot_token": "t", "signing_secret": COMMAND_TOKEN, "external_team": TEAM, **fields,
    }  # fmt: skip
    return Workspace(**values)


def refused(call, *args, **kwargs) -> RequestRefused:
    with pytest.raises(RequestRefused) as caught:
        call(*args, **kwargs)
    return caught.value


# --- verify --------------------------------------------------------------------------


def test_command_token():
    verify.command_token_check(workspace(), COMMAND_TOKEN)
    assert refused(verify.command_token_check, workspace(), "").status == 401
    wrong = refused(verify.command_token_check, workspace(), COMMAND_TOKEN + "x")
    assert wrong.status == 401
    assert "wrong slash command token" in wrong.message


def test_action_context_round_trip_and_forgeries():
    ws = workspace()
    context = verify.action_context_sign(ws, "approve", {"run": 5})
    assert context["action"] == "approve"
    assert context["value"] == {"run": 5}
    assert verify.action_context_verify(ws, context) == ("approve", {"run": 5})
    # The clear copies are not what is trusted.
    tampered = {**context, "value": {"run": 6}}
    assert verify.action_context_verify(ws, tampered) == ("approve", {"run": 5})
    resigned = {**context, "signature": context["signature"][:-2] + "xx"}
    assert "forged" in refused(verify.action_context_verify, ws, resigned).message
    other = workspace(signing_secret="another-secret-0123456789")
    assert "forged" in refused(verify.action_context_verify, other, context).message
    for missing in (None, {}, {"signature": 5}, "text"):
        assert "missing" in refused(verify.action_context_verify, ws, missing).message


def test_action_context_stale(monkeypatch, settings):
    ws = workspace()
    settings.CHAT_ACTION_MAX_AGE_SECONDS = 3600
    old = signing.b62_encode(int(time.time()) - 7200)
    monkeypatch.setattr(signing.TimestampSigner, "timestamp", lambda self: old)
    context = verify.action_context_sign(ws, "ack", {"incident": 1})
    monkeypatch.undo()
    problem = refused(verify.action_context_verify, ws, context)
    assert problem.status == 401
    assert "stale" in problem.message


def test_key_needs_secret_key(settings):
    ws = workspace()
    context = verify.action_context_sign(ws, "ack", {"incident": 1})
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    assert "forged" in refused(verify.action_context_verify, ws, context).message


# --- parse ---------------------------------------------------------------------------


def form_body(form: dict[str, str]) -> bytes:
    return urlencode(form).encode()


def test_command_request():
    form = slash_command_form("note #12 rolled back the canary")
    body = form_body(form)
    request = parse.command_request(workspace(), parse.form_fields(body), body)
    assert request.surface == Surface.MATTERMOST
    assert request.kind == InteractionKind.COMMAND
    assert request.action == "note"
    assert request.incident_id == 12
    assert request.args == {"incident": 12, "text": "rolled back the canary"}
    assert (request.external_user, request.external_name) == (form["user_id"], "alice")
    assert request.channel == form["channel_id"]
    assert request.trigger == form["trigger_id"]
    assert request.key.startswith("mm:")
    assert len(request.key) == 67
    assert request.reply_url == ""  # Mattermost's answers go as ephemeral posts
    again = parse.command_request(workspace(), parse.form_fields(body), body)
    assert again.key == request.key  # a replay is the same request


def test_command_without_trigger_is_keyed_by_its_body():
    form = slash_command_form("status", trigger_id="")
    body = form_body(form)
    request = parse.command_request(workspace(), parse.form_fields(body), body)
    assert request.action == "status"
    assert request.key.startswith("mm:")
    assert request.trigger == ""


def test_command_from_another_team_or_malformed():
    form = slash_command_form("status", team_id="otherteam")
    assert refused(parse.command_request, workspace(), form, b"").status == 403
    form = slash_command_form("status", user_id="")
    problem = refused(parse.command_request, workspace(), form, b"")
    assert problem.status == 400
    assert "'user_id'" in problem.message
    form = slash_command_form("status", channel_id="c" * 65)
    assert "'channel_id'" in refused(parse.command_request, workspace(), form, b"").message
    assert refused(parse.form_fields, b"\xff\xfe").status == 400


def test_action_request():
    ws = workspace()
    context = verify.action_context_sign(ws, "silence", {"incident": 12, "minutes": 60})
    data = action_payload(context)
    request = parse.action_request(ws, json.dumps(data).encode())
    assert request.kind == InteractionKind.BUTTON
    assert request.action == "silence"
    assert request.args == {"incident": 12, "minutes": 60}
    assert request.incident_id == 12
    assert request.thread == data["post_id"]
    assert request.channel == data["channel_id"]
    assert request.trigger == data["trigger_id"]
    assert request.key.startswith("mm:")
    untriggered = parse.action_request(ws, json.dumps({**data, "trigger_id": ""}).encode())
    assert untriggered.key != request.key
    assert untriggered.key.startswith("mm:")


def test_action_request_refusals():
    ws = workspace()
    context = verify.action_context_sign(ws, "ack", {"incident": 1})
    assert refused(parse.action_request, ws, b"[1]").status == 400
    assert refused(parse.action_request, ws, b"{nope").status == 400
    wrong_team = json.dumps(action_payload(context, team_id="otherteam")).encode()
    assert refused(parse.action_request, ws, wrong_team).status == 403
    forged = json.dumps(action_payload({"action": "ack", "value": {"incident": 1}})).encode()
    assert refused(parse.action_request, ws, forged).status == 401
    no_user = json.dumps(action_payload(context, user_id=None)).encode()
    problem = refused(parse.action_request, ws, no_user)
    assert problem.status == 400
    assert "'user_id'" in problem.message
    bad_user = json.dumps(action_payload(context, user_id=["x"])).encode()
    assert "must be a string" in refused(parse.action_request, ws, bad_user).message


def test_dialog_request_signed_value_wins():
    ws = workspace()
    state = verify.dialog_state_sign(ws, "resolve", {"incident": 12, "confirm": True})
    data = dialog_submission(state, {"reason": "false alarm", "incident": 99})
    request = parse.dialog_request(ws, data)
    assert request.kind == InteractionKind.DIALOG
    assert request.action == "resolve"
    assert request.args == {"reason": "false alarm", "incident": 12, "confirm": True}
    assert request.incident_id == 12
    assert parse.dialog_request(ws, data).key == request.key
    other = parse.dialog_request(ws, dialog_submission(state, {"reason": "another"}))
    assert other.key != request.key


def test_dialog_request_refusals():
    ws = workspace()
    state = verify.dialog_state_sign(ws, "note", {"incident": 1})
    assert (
        refused(parse.dialog_request, ws, {**dialog_submission(state), "type": "x"}).status == 400
    )
    assert refused(parse.dialog_request, ws, dialog_submission("forged")).status == 401
    wrong_team = dialog_submission(state, team_id="otherteam")
    assert refused(parse.dialog_request, ws, wrong_team).status == 403
    nested = dialog_submission(state, {"text": {"a": 1}})
    assert "'text'" in refused(parse.dialog_request, ws, nested).message
    assert parse.dialog_cancelled(dialog_submission(state, cancelled=True))


# --- render --------------------------------------------------------------------------


def test_plain_message_is_a_plain_post(settings):
    settings.NOTIFY_CONSOLE_URL = "https://console.example.com"
    body = post_body(workspace(), Message(text="acknowledged by alice"))
    assert body == {"message": "acknowledged by alice", "props": {}}


def test_dialog_body_limits():
    dialog = Dialog(
        title="Short", action="note", value={"incident": 1},
        inputs=(Input("text", "A label longer than twenty-four characters", initial="x" * 200),),
    )  # fmt: skip
    body = dialog_body(workspace(), dialog)
    element = body["elements"][0]
    assert len(element["display_name"]) == 24
    assert element["help_text"].startswith("A label")
    assert element["type"] == "text"
    assert len(element["default"]) == 150
    assert "submit_label" not in body  # Mattermost's own "Submit"
    button = Button("ack", "Ack", {"incident": 1})
    assert button.confirm == ""  # nothing to render: Mattermost buttons cannot ask first


@pytest.mark.django_db
def test_buttons_need_the_consoles_address(settings):
    settings.NOTIFY_CONSOLE_URL = ""
    with_button = Message(text="s", title="t", buttons=(Button("ack", "Ack", {"incident": 1}),))
    with pytest.raises(TransportError) as caught:
        post_body(workspace(), with_button)
    assert caught.value.retry is True
    assert "NOTIFY_CONSOLE_URL" in caught.value.message
    assert post_body(workspace(), Message(text="s", title="t"))["props"]["attachments"]
