"""The endpoints Mattermost calls, through the URLconf, the real verification and the
core's interaction_receive: what is recorded, what is refused and with which status."""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import pytest
from django.core import signing

from chatops.mattermost.render import post_body
from chatops.mattermost.verify import action_context_sign, dialog_state_sign
from chatops.messages import Button, Message
from chatops.models import ChatInteraction, InteractionKind, Surface, Workspace
from tests.chat_mattermost_server import (
    BOT_TOKEN,
    COMMAND_TOKEN,
    TEAM,
    action_payload,
    dialog_submission,
    slash_command_form,
)
from tests.factories import IncidentFactory

pytest_plugins = ["tests.chat_mattermost_server"]
pytestmark = pytest.mark.django_db


@pytest.fixture
def workspace():
    return Workspace.objects.create(
        name="mm", surface=Surface.MATTERMOST, api_url="https://mm.example.com",
        bot_token=BOT_TOKEN, signing_secret=COMMAND_TOKEN, external_team=TEAM,
        default_channel="cincidents00000000000000001",
    )  # fmt: skip


def url(workspace: Workspace, what: str) -> str:
    return f"/chat/mattermost/{workspace.pk}/{what}/"


def command(client, workspace, text="status", **fields):
    return client.post(
        url(workspace, "commands"),
        data=urlencode(slash_command_form(text, **fields)),
        content_type="application/x-www-form-urlencoded",
    )


def post_json(client, workspace, what, body):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(url(workspace, what), data=raw, content_type="application/json")


def test_command_recorded_and_acknowledged(client, workspace):
    incident = IncidentFactory()
    answer = command(client, workspace, f"note #{incident.pk} rolled back")
    assert answer.status_code == 200
    assert answer.json() == {"response_type": "ephemeral", "text": "Working on it…"}
    [row] = ChatInteraction.objects.all()
    assert row.workspace == workspace
    assert row.kind == InteractionKind.COMMAND
    assert row.action == "note"
    assert row.incident == incident
    assert row.request["text"] == "rolled back"
    assert row.external_user == "uresponder0000000000000001"


def test_command_with_wrong_or_missing_token(client, workspace):
    answer = command(client, workspace, token="wrong-token-0123456789")
    assert answer.status_code == 401
    assert "token" in answer.json()["error"]
    assert command(client, workspace, token="").status_code == 401
    assert not ChatInteraction.objects.exists()


def test_command_grammar_error_is_answered_to_the_user(client, workspace):
    answer = command(client, workspace, "frobnicate now")
    assert answer.status_code == 200
    assert answer.json()["response_type"] == "ephemeral"
    assert "Unknown command" in answer.json()["text"]
    assert "/incident declare" in answer.json()["text"]
    assert not ChatInteraction.objects.exists()


def test_command_from_another_team_or_malformed(client, workspace):
    answer = command(client, workspace, team_id="anotherteam")
    assert answer.status_code == 403
    answer = command(client, workspace, user_id="")
    assert answer.status_code == 400
    assert "'user_id'" in answer.json()["error"]
    assert not ChatInteraction.objects.exists()


def test_rendered_button_press_recorded_once(client, workspace):
    incident = IncidentFactory()
    message = Message(
        text="state", title="t", buttons=(Button("ack", "Ack", {"incident": incident.pk}),)
    )
    integration = post_body(workspace, message)["props"]["attachments"][0]["actions"][0]
    assert integration["integration"]["url"].endswith(url(workspace, "actions"))
    body = action_payload(integration["integration"]["context"])
    first = post_json(client, workspace, "actions", body)
    assert first.status_code == 200
    assert first.json() == {}  # a press shows nothing at once: the worker answers
    replay = post_json(client, workspace, "actions", body)
    assert replay.status_code == 200
    [row] = ChatInteraction.objects.all()
    assert row.kind == InteractionKind.BUTTON
    assert row.action == "ack"
    assert row.incident == incident
    assert row.request["thread"] == body["post_id"]
    assert row.repeats == 1


def test_forged_action_context(client, workspace):
    unsigned = {"action": "approve", "value": {"run": 1}}
    answer = post_json(client, workspace, "actions", action_payload(unsigned))
    assert answer.status_code == 401
    assert "signature" in answer.json()["error"]
    signed = action_context_sign(workspace, "reject", {"run": 1})
    swapped = {**signed, "signature": action_context_sign(workspace, "x", {})["signature"][:-3]}
    answer = post_json(client, workspace, "actions", action_payload(swapped))
    assert answer.status_code == 401
    assert "forged" in answer.json()["error"]
    other = Workspace(pk=workspace.pk, signing_secret="another-secret-0123456789")
    answer = post_json(
        client, workspace, "actions", action_payload(action_context_sign(other, "ack", {}))
    )
    assert answer.status_code == 401
    assert not ChatInteraction.objects.exists()


def test_stale_action_context(client, workspace, monkeypatch, settings):
    settings.CHAT_ACTION_MAX_AGE_SECONDS = 86400
    old = signing.b62_encode(int(time.time()) - 2 * 86400)
    monkeypatch.setattr(signing.TimestampSigner, "timestamp", lambda self: old)
    context = action_context_sign(workspace, "ack", {"incident": 1})
    monkeypatch.undo()
    answer = post_json(client, workspace, "actions", action_payload(context))
    assert answer.status_code == 401
    assert "stale" in answer.json()["error"]


def test_action_from_another_team_or_malformed(client, workspace):
    context = action_context_sign(workspace, "ack", {"incident": 1})
    answer = post_json(client, workspace, "actions", action_payload(context, team_id="other"))
    assert answer.status_code == 403
    assert post_json(client, workspace, "actions", b"not json").status_code == 400
    assert post_json(client, workspace, "actions", b"[]").status_code == 400
    answer = post_json(client, workspace, "actions", action_payload(context, user_id=7))
    assert answer.status_code == 400
    assert "'user_id'" in answer.json()["error"]
    assert not ChatInteraction.objects.exists()


def test_dialog_submitted_once_and_cancel_ignored(client, workspace):
    incident = IncidentFactory()
    state = dialog_state_sign(workspace, "resolve", {"incident": incident.pk, "confirm": True})
    body = dialog_submission(state, {"reason": "false alarm"})
    answer = post_json(client, workspace, "dialogs", body)
    assert answer.status_code == 200
    assert answer.json() == {}
    assert post_json(client, workspace, "dialogs", body).status_code == 200
    [row] = ChatInteraction.objects.all()
    assert row.kind == InteractionKind.DIALOG
    assert row.action == "resolve"
    assert row.request["reason"] == "false alarm"
    assert row.request["confirm"] is True
    assert row.repeats == 1
    cancelled = dialog_submission(state, {}, cancelled=True)
    assert post_json(client, workspace, "dialogs", cancelled).json() == {}
    assert ChatInteraction.objects.count() == 1


def test_dialog_refusals(client, workspace):
    assert post_json(client, workspace, "dialogs", dialog_submission("forged")).status_code == 401
    state = dialog_state_sign(workspace, "note", {"incident": 1})
    wrong = dialog_submission(state, team_id="other")
    assert post_json(client, workspace, "dialogs", wrong).status_code == 403
    malformed = {**dialog_submission(state), "type": "something"}
    assert post_json(client, workspace, "dialogs", malformed).status_code == 400


def test_unknown_disabled_or_slack_workspace_is_404(client, workspace):
    slack = Workspace.objects.create(
        name="slack", surface=Surface.SLACK, api_url="https://slack.com/api/",
        bot_token="xoxb", signing_secret=COMMAND_TOKEN, default_channel="C1",
    )  # fmt: skip
    assert command(client, slack).status_code == 404
    workspace.enabled = False
    workspace.save()
    assert command(client, workspace).status_code == 404
    answer = client.post("/chat/mattermost/999999/actions/", data=b"{}", content_type="a/b")
    assert answer.status_code == 404
    assert "error" in answer.json()


def test_only_post_and_at_most_one_megabyte(client, workspace):
    assert client.get(url(workspace, "commands")).status_code == 405
    big = b"{" + b" " * (1024 * 1024) + b"}"
    answer = post_json(client, workspace, "actions", big)
    assert answer.status_code == 413
    assert not ChatInteraction.objects.exists()
