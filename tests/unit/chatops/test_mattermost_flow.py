"""A Mattermost press and command through the real stack: the view records the request,
the worker's service (run here in the test's thread) maps the chat user through the real
mattermostautodriver reading the profile from the local server, acts, and answers with
an ephemeral post there. Transactional: the worker calls out after its commits."""

from __future__ import annotations

import json

import pytest

from chatops.mattermost.render import post_body
from chatops.messages import Button, Message
from chatops.models import ChatIdentity, ChatInteraction, InteractionStatus, Surface, Workspace
from chatops.services.interactions import interaction_run
from incidents.models import TimelineEvent
from tests.chat_mattermost_server import BOT_TOKEN, COMMAND_TOKEN, TEAM, action_payload
from tests.factories import IncidentFactory

pytest_plugins = ["tests.chat_mattermost_server"]
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def setup(mattermost_server, settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    settings.NOTIFY_CONSOLE_URL = "https://console.example.com"
    channel = mattermost_server.channel_add("incidents")["id"]
    workspace = Workspace.objects.create(
        name="mm", surface=Surface.MATTERMOST, api_url=mattermost_server.url,
        bot_token=BOT_TOKEN, signing_secret=COMMAND_TOKEN, external_team=TEAM,
        default_channel=channel,
    )  # fmt: skip
    return workspace, channel


def press(client, workspace, button: Button, **fields):
    action = post_body(workspace, Message(text="s", title="t", buttons=(button,)))
    context = action["props"]["attachments"][0]["actions"][0]["integration"]["context"]
    body = json.dumps(action_payload(context, **fields))
    return client.post(
        f"/chat/mattermost/{workspace.pk}/actions/", data=body, content_type="application/json"
    )


def test_mapped_user_acknowledges_from_a_button(client, mattermost_server, setup, make_user):
    workspace, channel = setup
    alice = make_user("alice", email="alice@example.com")
    chat_alice = mattermost_server.user_add(
        username="alice", email="alice@example.com", email_verified=True
    )
    incident = IncidentFactory()
    button = Button("ack", "Acknowledge", {"incident": incident.pk})
    fields = {"user_id": chat_alice["id"], "channel_id": channel}
    assert press(client, workspace, button, trigger_id="t-1", **fields).status_code == 200
    assert press(client, workspace, button, trigger_id="t-1", **fields).status_code == 200
    [row] = ChatInteraction.objects.all()
    assert row.repeats == 1
    interaction_run(interaction_id=row.pk)
    interaction_run(interaction_id=row.pk)  # a second delivery of the task does nothing
    row.refresh_from_db()
    assert row.status == InteractionStatus.DONE
    assert row.user == alice
    incident.refresh_from_db()
    assert incident.status == "acknowledged"
    assert TimelineEvent.objects.filter(incident=incident, source="mattermost").exists()
    identity = ChatIdentity.objects.get(workspace=workspace, external_user=chat_alice["id"])
    assert identity.user == alice
    assert mattermost_server.calls_to("GET", f"/api/v4/users/{chat_alice['id']}")


def test_unmapped_user_is_answered_privately(client, mattermost_server, setup):
    workspace, channel = setup
    stranger = mattermost_server.user_add(username="mallory", email="m@example.com")
    incident = IncidentFactory()
    button = Button("ack", "Acknowledge", {"incident": incident.pk})
    answer = press(client, workspace, button, user_id=stranger["id"], channel_id=channel)
    assert answer.status_code == 200
    interaction_run(interaction_id=ChatInteraction.objects.get().pk)
    incident.refresh_from_db()
    assert incident.status == "triggered"
    [reply] = mattermost_server.ephemerals
    assert reply["user_id"] == stranger["id"]
    assert reply["post"]["channel_id"] == channel
    assert "not linked" in json.dumps(reply["post"])
