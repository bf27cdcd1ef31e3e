"""Slack's request signature (chatops/slack/verify.py) and the payload parsing
(chatops/slack/parse.py, render.py's button and dialog encoding read back), with requests
signed and built exactly as Slack does (tests/chat_slack_server.py)."""

from __future__ import annotations

import json
import time

import pytest

from chatops.messages import Button, Dialog, Input, Message
from chatops.models import InteractionKind, Surface, Workspace
from chatops.refusals import RequestRefused
from chatops.slack.parse import command_request, interaction_request, reply_url_check
from chatops.slack.render import dialog_metadata, dialog_view, escape, message_blocks
from chatops.slack.verify import slack_request_verify
from tests.chat_slack_server import (
    SIGNING_SECRET,
    TEAM,
    block_actions,
    command_form,
    form_body,
    payload_body,
    signed_headers,
    view_submission,
)

API = "https://slack.com/api/"


def workspace(**kw: object) -> Workspace:
    fields: dict[str, object] = {
        "pk": 7,
        "surface": Surface.SLACK,
        "api_url": API,
        "signing_secret": SIGNING_SECRET,
        "external_team": TEAM,
    }
    return Workspace(**(fields | kw))


BODY = form_body(command_form("status #4"))


def test_a_request_signed_as_slack_signs_it_passes():
    slack_request_verify(workspace(), signed_headers(SIGNING_SECRET, BODY), BODY)


# Headers are made when the test runs (a signature made at collection could be stale by
# then, and its random trigger id would differ between xdist workers' collections).
@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: (signed_headers(SIGNING_SECRET, BODY), BODY + b"&text=resolve"), "forged"),
        (lambda: (signed_headers("another-secret-0123456789", BODY), BODY), "forged"),
        (
            lambda: ({**signed_headers(SIGNING_SECRET, BODY), "X-Slack-Signature": "v0=00"}, BODY),
            "forged",
        ),
        (lambda: ({"X-Slack-Signature": "v0=abc"}, BODY), "missing X-Slack-Request-Timestamp"),
        (lambda: ({}, BODY), "missing X-Slack-Request-Timestamp and X-Slack-Signature"),
        (
            lambda: ({"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=a"}, BODY),
            "number",
        ),
    ],
    ids=["body-changed", "other-secret", "bad-signature", "no-timestamp", "no-headers", "nan"],
)
def test_forged_or_unsigned_requests_are_refused(make, words):
    headers, body = make()
    with pytest.raises(RequestRefused) as refused:
        slack_request_verify(workspace(), headers, body)
    assert refused.value.status == 401
    assert words in refused.value.message


@pytest.mark.parametrize(("offset", "words"), [(-301, "ago"), (301, "future")])
def test_a_timestamp_outside_the_window_is_stale(settings, offset, words):
    settings.CHAT_REQUEST_MAX_AGE_SECONDS = 300
    headers = signed_headers(SIGNING_SECRET, BODY, timestamp=int(time.time()) + offset)
    with pytest.raises(RequestRefused) as refused:
        slack_request_verify(workspace(), headers, BODY)
    assert "stale" in refused.value.message
    assert words in refused.value.message


def test_the_window_is_ours_not_slack_sdks(settings):
    # slack_sdk's verifier has a fixed 5 minutes: a longer window set here must hold.
    settings.CHAT_REQUEST_MAX_AGE_SECONDS = 900
    headers = signed_headers(SIGNING_SECRET, BODY, timestamp=int(time.time()) - 600)
    slack_request_verify(workspace(), headers, BODY)


def test_a_slash_command_becomes_a_chat_request():
    form = command_form(
        "note #12 disk full",
        trigger_id="111.222.abc",
        response_url="https://hooks.slack.com/commands/T0/1/x",
    )
    request = command_request(workspace(), {"X-Slack-Retry-Num": "1"}, form_body(form))
    assert (request.kind, request.action, request.incident_id) == (
        InteractionKind.COMMAND,
        "note",
        12,
    )
    assert request.args == {"incident": 12, "text": "disk full"}
    assert (request.key, request.trigger, request.retry) == ("111.222.abc", "111.222.abc", 1)
    assert request.external_user == "U0ALICE"
    assert request.channel == form["channel_id"]
    assert request.reply_url == form["response_url"]


def test_a_command_from_another_slack_team_is_refused():
    body = form_body(command_form("help", team_id="T0OTHER"))
    with pytest.raises(RequestRefused) as refused:
        command_request(workspace(), {}, body)
    assert refused.value.status == 403


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://hooks.slack.com/actions/T0/1/abc", True),
        ("http://hooks.slack.com/actions/T0/1/abc", False),
        ("https://hooks.slack.com.evil.example/a", False),
        ("https://169.254.169.254/latest", False),
        ("http://127.0.0.1:9/respond/x", True),  # the API's own host (the test server)
        ("http://127.0.0.1:10/respond/x", False),
    ],
)
def test_a_response_url_must_be_slacks(url, kept):
    found = workspace(api_url="http://127.0.0.1:9/api/")
    assert reply_url_check(found, url) == (url if kept else "")


def test_a_button_press_decodes_back_to_its_action_and_value():
    button = Button("silence", "Silence 1h", {"incident": 5, "minutes": 60}, style="danger")
    blocks = message_blocks(Message(text="x", buttons=(Button("ack", "Ack"), button)))
    element = blocks[-1]["elements"][1]
    payload = block_actions(
        action_id=element["action_id"],
        value=element["value"],
        trigger_id="9.8.t",
        message_ts="1700.1",
    )
    request = interaction_request(workspace(), {}, payload_body(payload))
    assert request is not None
    assert (request.action, request.incident_id, request.args) == (
        "silence",
        5,
        {"incident": 5, "minutes": 60},
    )
    assert (request.kind, request.key, request.thread) == (
        InteractionKind.BUTTON,
        "9.8.t",
        "1700.1",
    )
    assert request.reply_url == payload["response_url"]


def test_the_console_link_button_needs_only_an_answer():
    payload = block_actions(action_id="open_link", value="")
    assert interaction_request(workspace(), {}, payload_body(payload)) is None


def test_a_modal_submission_carries_the_dialogs_action_value_and_inputs():
    dialog = Dialog(
        "Resolve #5?",
        "resolve",
        {"incident": 5, "confirm": True},
        inputs=(Input("reason", "Reason", multiline=True),),
        submit="Resolve",
    )
    view = dialog_view(dialog)
    assert view["private_metadata"] == dialog_metadata(dialog)
    assert [b["block_id"] for b in view["blocks"] if b["type"] == "input"] == ["reason"]
    payload = view_submission(
        view_id="V1",
        private_metadata=view["private_metadata"],
        values={"reason": "alerts are stale"},
    )
    request = interaction_request(workspace(), {}, payload_body(payload))
    assert request is not None
    assert (request.kind, request.action, request.incident_id) == (
        InteractionKind.DIALOG,
        "resolve",
        5,
    )
    assert request.args == {"incident": 5, "confirm": True, "reason": "alerts are stale"}
    assert request.key.startswith("view:V1:")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"", "missing the payload field"),
        (b"payload=%7Bnot-json", "payload is not JSON"),
        (payload_body({"type": "block_actions"}), "payload.user"),
        (
            payload_body({**block_actions(action_id="x:0", value="{}"), "actions": []}),
            "payload.actions[0]",
        ),
        (
            payload_body(block_actions(action_id="ack:0", value="not json")),
            "payload.actions[0].value",
        ),
        (payload_body(block_actions(action_id="ack:0", value='{"incident": "x"}')), "incident"),
        (payload_body(block_actions(action_id="DROP TABLE:0", value="{}")), "action_id"),
        (payload_body(view_submission(view_id="V1", private_metadata="nope")), "private_metadata"),
        (
            payload_body({**block_actions(action_id="x:0", value="{}"), "type": "shortcut"}),
            "payload.type",
        ),
    ],
    # The payloads carry random trigger ids: ids keep xdist workers' collections equal.
    ids=[
        "empty",
        "not-json",
        "no-user",
        "no-action",
        "bad-value",
        "bad-incident",
        "bad-action-id",
        "bad-metadata",
        "other-type",
    ],
)
def test_a_malformed_payload_is_refused_naming_the_field(body, words):
    with pytest.raises(RequestRefused) as refused:
        interaction_request(workspace(), {}, body)
    assert refused.value.status == 400
    assert words in refused.value.message


def test_a_payload_from_another_team_is_refused():
    payload = block_actions(action_id="ack:0", value="{}", team_id="T0OTHER")
    with pytest.raises(RequestRefused) as refused:
        interaction_request(workspace(), {}, payload_body(payload))
    assert refused.value.status == 403


def test_render_escapes_user_text_and_always_sets_the_fallback():
    message = Message(
        text="<!channel> & co",
        title="Pods <crash>",
        fields=(("Commander", "a&b"),),
        lines=("<https://evil|click>",),
        link="https://console.example.com/incidents/5/",
        buttons=(
            Button(
                "resolve", "Resolve", {"incident": 5}, style="danger", confirm="Alerts still fire."
            ),
        ),
    )
    blocks = message_blocks(message)
    text = json.dumps(blocks)
    assert "<!channel>" not in text
    assert "<https://evil" not in text
    assert escape("<!here> & >") == "&lt;!here&gt; &amp; &gt;"
    buttons = blocks[-1]["elements"]
    assert buttons[0]["style"] == "danger"
    assert "confirm" in buttons[0]
    assert buttons[1]["url"] == message.link
    assert buttons[1]["action_id"] == "open_link"


def test_a_modal_title_is_cut_to_slacks_limit_and_loading_has_no_submit():
    view = dialog_view(
        Dialog("Request the recommended action for #12345", "request", inputs=(Input("x", "X"),))
    )
    assert len(view["title"]["text"]) <= 24
    assert "submit" not in view
    assert not [b for b in view["blocks"] if b["type"] == "input"]
    assert view["callback_id"] == "chatops"
