"""MattermostTransport: the real mattermostautodriver (httpx) against the local server
speaking Mattermost's API v4 (tests/chat_mattermost_server.py), through the outgoing
guard and the deadline."""

from __future__ import annotations

import socket
import time

import pytest

from chatops.mattermost.client import MattermostTransport, channel_name
from chatops.mattermost.verify import action_context_verify, dialog_state_verify
from chatops.messages import Button, Dialog, Input, Message
from chatops.models import Surface, Workspace
from chatops.transport import TransportError
from tests.chat_mattermost_server import BOT_TOKEN, COMMAND_TOKEN, TEAM, MattermostServer

pytest_plugins = ["tests.chat_mattermost_server"]

STATE = Message(
    text="#12 SEV2 vLLM latency high: investigating",
    title="#12 vLLM latency high",
    fields=(("Status", "investigating"), ("Severity", "SEV2")),
    lines=("p99 above 2 s for 10 minutes",),
    buttons=(
        Button("ack", "Acknowledge", {"incident": 12}, style="primary"),
        Button("silence", "Silence 1 h", {"incident": 12, "minutes": 60}),
        Button("request_confirm", "Run", {"incident": 12, "key": "k"}, style="danger"),
    ),
    color="#d93f0b",
    link="http://testserver/incidents/12/",
)


@pytest.fixture
def admitted(settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    settings.NOTIFY_CONSOLE_URL = "https://console.example.com"
    settings.CHAT_TIMEOUT_SECONDS = 5.0


def workspace_for(server: MattermostServer, **fields: object) -> Workspace:
    # Unsaved (no database): the transport reads only its fields.
    values: dict[str, object] = {
        "pk": 7,
        "name": "mm",
        "surface": Surface.MATTERMOST,
        "api_url": server.url,
        "bot_token": BOT_TOKEN,
        "signing_secret": COMMAND_TOKEN,
        "external_team": TEAM,
        "default_channel": "",
        **fields,
    }
    return Workspace(**values)


@pytest.fixture
def transport(mattermost_server, admitted):
    return MattermostTransport(workspace_for(mattermost_server))


def test_post_renders_attachment_with_signed_actions(transport, mattermost_server):
    channel = mattermost_server.channel_add("incidents")["id"]
    post_id = transport.post(channel=channel, thread="", message=STATE)
    post = mattermost_server.posts[post_id]
    assert post["channel_id"] == channel
    assert post["root_id"] == ""
    [call] = mattermost_server.calls_to("POST", "/api/v4/posts")
    assert call.headers["Authorization"] == f"Bearer {BOT_TOKEN}"
    [attachment] = post["props"]["attachments"]
    assert attachment["title"] == "#12 vLLM latency high"
    assert attachment["title_link"] == "http://testserver/incidents/12/"
    assert attachment["fallback"] == STATE.text
    assert attachment["fields"][0] == {"title": "Status", "value": "investigating", "short": True}
    ids = [a["id"] for a in attachment["actions"]]
    assert ids == ["ack0", "silence1", "requestconfirm2"]
    assert [a["style"] for a in attachment["actions"]] == ["primary", "default", "danger"]
    silence = attachment["actions"][1]["integration"]
    assert silence["url"] == "https://console.example.com/chat/mattermost/7/actions/"
    signed = action_context_verify(transport.workspace, silence["context"])
    assert signed == ("silence", {"incident": 12, "minutes": 60})


def test_thread_reply_and_edit_in_place(transport, mattermost_server):
    channel = mattermost_server.channel_add("incidents")["id"]
    root = transport.post(channel=channel, thread="", message=STATE)
    reply = transport.post(channel=channel, thread=root, message=Message(text="acknowledged"))
    assert mattermost_server.posts[reply]["root_id"] == root
    assert mattermost_server.posts[reply]["message"] == "acknowledged"
    edited = Message(text="#12 mitigated", title="#12 vLLM latency high", color="#2da44e")
    transport.edit(channel=channel, message_id=root, message=edited)
    post = mattermost_server.posts[root]
    assert post["props"]["attachments"][0]["color"] == "#2da44e"
    assert post["props"]["attachments"][0]["actions"] == []
    assert post["edit_at"] > 0
    assert len(mattermost_server.by_channel[channel]) == 2


def test_ephemeral_goes_to_one_user_in_the_thread(transport, mattermost_server):
    channel = mattermost_server.channel_add("incidents")["id"]
    transport.ephemeral(channel=channel, user="u1", thread="p1", message=Message(text="only you"))
    [sent] = mattermost_server.ephemerals
    assert sent["user_id"] == "u1"
    assert sent["post"]["channel_id"] == channel
    assert sent["post"]["root_id"] == "p1"
    assert sent["post"]["message"] == "only you"


def test_create_channel_then_reuse_it(transport, mattermost_server):
    alice = mattermost_server.user_add(username="alice")["id"]
    bob = mattermost_server.user_add(username="bob")["id"]
    made = transport.create_channel(name="inc-12 vLLM Latency", members=[alice, "nobody"])
    channel = mattermost_server.channels[made]
    assert channel["name"] == "inc-12-vllm-latency"
    assert channel["team_id"] == TEAM
    assert channel["display_name"] == "inc-12 vLLM Latency"
    # An unknown member (404) is skipped, not a failure.
    assert mattermost_server.members[made] == {mattermost_server.bot["id"], alice}
    mattermost_server.members[made].discard(mattermost_server.bot["id"])
    again = transport.create_channel(name="inc-12 vLLM Latency", members=[bob])
    assert again == made  # the name was taken: the channel is reused, the bot rejoins
    assert mattermost_server.members[made] == {mattermost_server.bot["id"], alice, bob}


def test_channel_names_are_valid():
    assert channel_name("Inc-7: GPU OOM!") == "inc-7-gpu-oom"
    assert channel_name("x") == "incident-x"
    assert len(channel_name("a" * 100)) == 64


def test_profile_email_only_when_verified_and_sso_subject(transport, mattermost_server):
    sso = mattermost_server.user_add(
        username="carol", email="carol@example.com", email_verified=True,
        auth_service="openid", auth_data="sub-123", first_name="Carol", last_name="Ng",
    )  # fmt: skip
    profile = transport.profile(user=sso["id"])
    assert (profile.user, profile.name, profile.email) == (sso["id"], "Carol Ng", sso["email"])
    assert profile.email_verified
    assert profile.sso_subject == "sub-123"
    plain = mattermost_server.user_add(
        username="dave", email="dave@example.com", auth_service="ldap", auth_data="dave"
    )
    profile = transport.profile(user=plain["id"])
    assert (profile.name, profile.email, profile.email_verified) == ("dave", "", False)
    assert profile.sso_subject == ""  # ldap: not the console's identity provider


def test_open_dialog_with_signed_state(transport, mattermost_server):
    dialog = Dialog(
        title="Resolve #12 while alerts fire",
        action="resolve",
        value={"incident": 12, "confirm": True},
        lines=("2 alerts still firing",),
        fields=(("Severity", "SEV2"),),
        inputs=(Input("reason", "Why resolve now?", multiline=True),),
        submit="Resolve",
    )
    assert transport.open_dialog(trigger="trig-1", dialog=dialog, user="u1") == ""
    [opened] = mattermost_server.dialogs
    assert opened["trigger_id"] == "trig-1"
    assert opened["url"] == "https://console.example.com/chat/mattermost/7/dialogs/"
    body = opened["dialog"]
    assert body["title"] == "Resolve #12 while alert…"
    assert len(body["title"]) == 24
    assert body["callback_id"] == "resolve"
    assert body["submit_label"] == "Resolve"
    assert body["elements"][0]["type"] == "textarea"
    assert body["elements"][0]["name"] == "reason"
    assert "2 alerts still firing" in body["introduction_text"]
    assert "**Severity**: SEV2" in body["introduction_text"]
    state = dialog_state_verify(transport.workspace, body["state"])
    assert state == ("resolve", {"incident": 12, "confirm": True})


def test_no_dialog_update_no_response_url_and_permalink(transport):
    with pytest.raises(TransportError) as caught:
        transport.update_dialog(dialog_id="", dialog=Dialog(title="t", action="request"))
    assert caught.value.retry is False
    with pytest.raises(TransportError) as caught:
        transport.respond(reply_url="https://chat.example.com/hooks/x", message=Message(text="x"))
    assert caught.value.retry is False
    link = transport.permalink(channel="c", message_id="p1")
    assert link == f"{transport.workspace.api_url}/_redirect/pl/p1"


def test_rate_limited_is_retried_later_with_the_wait_asked(transport, mattermost_server):
    channel = mattermost_server.channel_add("incidents")["id"]
    mattermost_server.fail(429, headers={"Retry-After": "7", "X-RateLimit-Remaining": "0"})
    with pytest.raises(TransportError) as caught:
        transport.post(channel=channel, thread="", message=STATE)
    assert caught.value.retry is True
    assert caught.value.retry_after == 7.0
    assert len(mattermost_server.calls_to("POST", "/api/v4/posts")) == 1  # no driver retry


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried_later(transport, mattermost_server, status):
    mattermost_server.fail(status)
    with pytest.raises(TransportError) as caught:
        transport.profile(user=mattermost_server.bot["id"])
    assert caught.value.retry is True
    assert len(mattermost_server.calls_to("GET", "/api/v4/users/")) == 1


def test_hang_ends_at_the_deadline(transport, mattermost_server, settings):
    settings.CHAT_TIMEOUT_SECONDS = 1.0
    mattermost_server.fail(200, hang=10)
    started = time.monotonic()
    with pytest.raises(TransportError) as caught:
        transport.post(channel="c", thread="", message=Message(text="x"))
    assert time.monotonic() - started < 4
    assert caught.value.retry is True
    assert "within 1 s" in caught.value.message


def test_invalid_token_is_not_retried(mattermost_server, admitted):
    transport = MattermostTransport(workspace_for(mattermost_server, bot_token="wrong"))
    with pytest.raises(TransportError) as caught:
        transport.whoami()
    assert caught.value.retry is False
    assert "bot token (401)" in caught.value.message


@pytest.mark.parametrize(
    ("status", "words"), [(400, "(400)"), (403, "add it to the team"), (404, "check the channel")]
)
def test_client_errors_say_what_to_fix(transport, mattermost_server, status, words):
    mattermost_server.fail(status)
    with pytest.raises(TransportError) as caught:
        transport.post(channel="c", thread="", message=Message(text="x"))
    assert caught.value.retry is False
    assert words in caught.value.message


def test_guard_refuses_an_internal_address_not_allowlisted(mattermost_server, settings):
    settings.OUTGOING_URL_ALLOWLIST = ""
    transport = MattermostTransport(workspace_for(mattermost_server))
    with pytest.raises(TransportError) as caught:
        transport.whoami()
    assert caught.value.retry is False
    assert "OUTGOING_URL_ALLOWLIST" in caught.value.message
    assert mattermost_server.calls == []


def test_unreachable_server_is_retried_later(admitted):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    workspace = Workspace(
        pk=7, name="mm", surface=Surface.MATTERMOST, api_url=f"http://127.0.0.1:{port}",
        bot_token=BOT_TOKEN, signing_secret=COMMAND_TOKEN, external_team=TEAM,
    )  # fmt: skip
    with pytest.raises(TransportError) as caught:
        MattermostTransport(workspace).whoami()
    assert caught.value.retry is True
    assert "could not reach" in caught.value.message


def test_server_under_a_path(mattermost_server, admitted):
    workspace = workspace_for(mattermost_server, api_url=mattermost_server.url + "/chat/")
    with pytest.raises(TransportError) as caught:
        MattermostTransport(workspace).whoami()
    # The driver kept the path: the server (at the root) did not find /chat/api/v4/...
    assert "(404)" in caught.value.message
    assert mattermost_server.calls[0].path == "/chat/api/v4/users/me"
