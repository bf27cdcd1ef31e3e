"""SlackTransport (chatops/slack/client.py) driving the real slack_sdk WebClient and
WebhookClient against the local Slack (tests/chat_slack_server.py), through the
outgoing guard and the deadline."""

from __future__ import annotations

import time

import pytest

from chatops.messages import Button, Dialog, Input, Message
from chatops.models import Surface, Workspace
from chatops.slack.client import SlackTransport
from chatops.slack.parse import interaction_request
from chatops.transport import TransportError
from tests.chat_slack_server import CHANNEL, SIGNING_SECRET, TEAM, SlackServer, payload_body

pytest_plugins = ["tests.chat_slack_server"]

STATE = Message(
    text="#5 Pods crash-looping: firing",
    title="#5 Pods crash-looping",
    fields=(("Status", "firing"), ("Severity", "SEV2")),
    lines=("2 alerts firing",),
    buttons=(Button("ack", "Acknowledge", {"incident": 5}, style="primary"),),
    link="https://console.example.com/incidents/5/",
)


@pytest.fixture
def transport(slack_server: SlackServer, settings) -> SlackTransport:
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    settings.CHAT_TIMEOUT_SECONDS = 5
    workspace = Workspace(
        pk=1,
        surface=Surface.SLACK,
        api_url=slack_server.api_url,
        bot_token=slack_server.token,
        signing_secret=SIGNING_SECRET,
        external_team=TEAM,
        default_channel=CHANNEL,
    )
    return SlackTransport(workspace)


def test_post_a_state_message_then_reply_in_its_thread_and_edit_it(transport, slack_server):
    root = transport.post(channel=CHANNEL, thread="", message=STATE)
    reply = transport.post(channel=CHANNEL, thread=root, message=Message(text="Acked by bob"))
    edited = Message(text="#5: acknowledged", title="#5 Pods crash-looping")
    transport.edit(channel=CHANNEL, message_id=root, message=edited)

    assert [c.thread_ts for c in slack_server.calls_to("chat.postMessage")] == [None, root]
    assert slack_server.thread(CHANNEL, root)[0]["ts"] == reply
    state = slack_server.message(CHANNEL, root)
    assert state is not None
    assert state["edited"]
    assert state["text"] == "#5: acknowledged"
    first = slack_server.calls_to("chat.postMessage")[0].body
    assert first["text"] == STATE.text  # the fallback is always there
    assert [b["type"] for b in first["blocks"]] == ["header", "section", "context", "actions"]


def test_the_posted_buttons_are_found_on_the_message(transport, slack_server):
    root = transport.post(channel=CHANNEL, thread="", message=STATE)
    buttons = slack_server.buttons(CHANNEL, root)
    assert [b["action_id"] for b in buttons] == ["ack:0", "open_link"]
    assert buttons[0]["value"] == '{"incident":5}'


def test_ephemeral_and_permalink(transport, slack_server):
    root = transport.post(channel=CHANNEL, thread="", message=STATE)
    transport.ephemeral(channel=CHANNEL, user="U0ALICE", thread=root, message=Message(text="hi"))
    assert slack_server.ephemerals[0]["user"] == "U0ALICE"
    assert slack_server.ephemerals[0]["thread_ts"] == root
    link = transport.permalink(channel=CHANNEL, message_id=root)
    assert link.startswith("https://example.slack.com/archives/")


def test_respond_through_the_response_url(transport, slack_server):
    url = slack_server.response_url()
    transport.respond(reply_url=url, message=Message(text="Done"))
    (answer,) = slack_server.responses[url.rsplit("/", 1)[1]]
    assert answer["response_type"] == "ephemeral"
    assert answer["replace_original"] is False
    assert answer["text"] == "Done"


def test_respond_refuses_an_address_that_is_not_slacks(transport):
    with pytest.raises(TransportError) as failed:
        transport.respond(reply_url="https://evil.example/hook", message=Message(text="x"))
    assert not failed.value.retry


def test_open_then_update_a_dialog(transport, slack_server):
    loading = Dialog("Request action", "request", {"incident": 5}, lines=("Loading…",))
    view_id = transport.open_dialog(trigger=slack_server.new_trigger(), dialog=loading, user="U1")
    ready = Dialog(
        "Request action",
        "request_confirm",
        {"incident": 5, "key": "k1"},
        lines=("Scale to 4",),
        inputs=(Input("note", "Note", optional=True),),
        submit="Request",
    )
    transport.update_dialog(dialog_id=view_id, dialog=ready)
    view = slack_server.views[view_id]
    assert view["submit"]["text"] == "Request"
    assert '"request_confirm"' in view["private_metadata"]


def test_a_stale_trigger_is_not_retried(transport, slack_server):
    with pytest.raises(TransportError) as failed:
        transport.open_dialog(trigger="1.2.unknown", dialog=Dialog("x", "request"), user="U1")
    assert not failed.value.retry
    assert "expired_trigger_id" in failed.value.message


@pytest.mark.parametrize(("confirmed", "email"), [(True, "bob@example.com"), (False, "")])
def test_profile_gives_the_email_only_when_slack_confirmed_it(
    transport, slack_server, confirmed, email
):
    slack_server.add_user(
        "U0BOB", "bob", email="bob@example.com", confirmed=confirmed, real_name="Bob Smith"
    )
    profile = transport.profile(user="U0BOB")
    assert (profile.user, profile.name, profile.email) == ("U0BOB", "Bob Smith", email)
    assert profile.email_verified is confirmed


def test_create_a_channel_and_invite(transport, slack_server):
    slack_server.add_user("U0BOB", "bob")
    channel = transport.create_channel(name="inc-5 Pods Crash", members=["U0BOB"])
    assert slack_server.channels[channel]["name"] == "inc-5-pods-crash"
    assert "U0BOB" in slack_server.channels[channel]["members"]
    again = transport.create_channel(name="inc-5 Pods Crash", members=[])
    assert again != channel
    assert slack_server.channels[again]["name"].startswith("inc-5-pods-crash-")


def test_429_asks_to_retry_after_what_slack_said(transport, slack_server):
    slack_server.fail(429, retry_after=7)
    with pytest.raises(TransportError) as failed:
        transport.post(channel=CHANNEL, thread="", message=STATE)
    assert failed.value.retry
    assert failed.value.retry_after == 7
    assert len(slack_server.calls) == 1  # slack_sdk did not retry on its own


def test_a_5xx_is_retried_later(transport, slack_server):
    slack_server.fail(500)
    with pytest.raises(TransportError) as failed:
        transport.post(channel=CHANNEL, thread="", message=STATE)
    assert failed.value.retry
    assert failed.value.retry_after is None


def test_a_bad_token_is_not_retried_and_says_what_to_do(transport, slack_server):
    transport.workspace.bot_token = "xoxb-wrong"
    with pytest.raises(TransportError) as failed:
        transport.post(channel=CHANNEL, thread="", message=STATE)
    assert not failed.value.retry
    assert "invalid_auth" in failed.value.message
    assert "Bot User OAuth Token" in failed.value.message


def test_not_in_channel_is_not_retried(transport, slack_server):
    slack_server.refuse("not_in_channel")
    with pytest.raises(TransportError) as failed:
        transport.post(channel=CHANNEL, thread="", message=STATE)
    assert not failed.value.retry
    assert "/invite" in failed.value.message


def test_a_hanging_slack_is_cut_by_the_deadline(transport, slack_server, settings):
    settings.CHAT_TIMEOUT_SECONDS = 0.5
    slack_server.fail(hang=5.0)
    started = time.monotonic()
    with pytest.raises(TransportError) as failed:
        transport.post(channel=CHANNEL, thread="", message=STATE)
    assert time.monotonic() - started < 2.5
    assert failed.value.retry


def test_an_unreachable_slack_is_retried(transport, slack_server):
    slack_server.close()
    with pytest.raises(TransportError) as failed:
        transport.post(channel=CHANNEL, thread="", message=STATE)
    assert failed.value.retry


def test_the_outgoing_guard_refuses_an_internal_address(transport, slack_server, settings):
    settings.OUTGOING_URL_ALLOWLIST = ""
    with pytest.raises(TransportError) as failed:
        transport.post(channel=CHANNEL, thread="", message=STATE)
    assert not failed.value.retry
    assert "refused" in failed.value.message
    assert slack_server.calls == []


def test_a_press_on_the_posted_message_parses_back(transport, slack_server):
    root = transport.post(channel=CHANNEL, thread="", message=STATE)
    payload = slack_server.press(CHANNEL, root, "ack", user_id="U0BOB")
    request = interaction_request(transport.workspace, {}, payload_body(payload))
    assert request is not None
    assert (request.action, request.incident_id, request.thread) == ("ack", 5, root)
    assert (request.channel, request.external_user) == (CHANNEL, "U0BOB")
    transport.respond(reply_url=request.reply_url, message=Message(text="Acknowledged"))
    assert slack_server.calls[-1].method == "respond"


def test_a_submitted_modal_parses_back_with_its_inputs(transport, slack_server):
    dialog = Dialog(
        "Resolve #5",
        "resolve",
        {"incident": 5, "confirm": True},
        inputs=(Input("reason", "Why"),),
        submit="Resolve",
    )
    view_id = transport.open_dialog(trigger=slack_server.new_trigger(), dialog=dialog, user="U1")
    payload = slack_server.submit(view_id, {"reason": "false alarm"})
    request = interaction_request(transport.workspace, {}, payload_body(payload))
    assert request is not None
    assert request.args == {"incident": 5, "confirm": True, "reason": "false alarm"}
    assert request.key == f"view:{view_id}:{slack_server.views[view_id]['hash']}"
