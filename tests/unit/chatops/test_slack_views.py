"""The Slack endpoints (chatops/slack/views.py) as Slack calls them: bodies built and
signed exactly as Slack does (tests/chat_slack_server.py), posted through Django's test
client. A verified request is recorded once (ChatInteraction), answered at once; a
retry or a replay of the same signed request records nothing more."""

from __future__ import annotations

import json
import time

import pytest
from django.urls import reverse

from chatops.messages import Dialog
from chatops.models import ChatInteraction, InteractionKind, Surface, Workspace
from chatops.slack.render import dialog_metadata
from tests.chat_slack_server import (
    SIGNING_SECRET,
    block_actions,
    command_form,
    form_body,
    payload_body,
    signed_headers,
    slack_post,
    view_submission,
)

pytest_plugins = ["tests.chat_slack_server"]

pytestmark = pytest.mark.django_db


def commands_url(workspace: Workspace) -> str:
    return reverse("chatops:slack-commands", args=[workspace.pk])


def interactions_url(workspace: Workspace) -> str:
    return reverse("chatops:slack-interactions", args=[workspace.pk])


def test_a_signed_command_is_answered_at_once_and_recorded(client, slack_workspace):
    body = form_body(command_form("status", trigger_id="100.200.abc"))
    started = time.monotonic()
    response = slack_post(client, commands_url(slack_workspace), body)
    assert time.monotonic() - started < 3  # Slack gives up after 3 s
    assert response.status_code == 200
    answer = response.json()
    assert answer["response_type"] == "ephemeral"
    assert answer["text"]  # the receipt's "working on it", in the workspace's language
    (row,) = ChatInteraction.objects.filter(workspace=slack_workspace)
    assert (row.key, row.kind, row.action) == ("100.200.abc", InteractionKind.COMMAND, "status")
    assert row.external_user == "U0ALICE"


def test_slacks_retry_of_a_command_records_nothing_more(client, slack_workspace):
    body = form_body(command_form("status", trigger_id="100.200.retry"))
    assert slack_post(client, commands_url(slack_workspace), body).status_code == 200
    again = slack_post(client, commands_url(slack_workspace), body, retry_num=1)
    assert again.status_code == 200
    row = ChatInteraction.objects.get(workspace=slack_workspace)
    assert row.repeats == 1


def test_a_replay_of_the_same_signed_press_records_nothing_more(client, slack_workspace):
    payload = block_actions(action_id="ack:0", value='{"incident":5}', trigger_id="7.7.replay")
    body = payload_body(payload)
    headers = signed_headers(SIGNING_SECRET, body)
    url = interactions_url(slack_workspace)
    for _ in range(2):
        response = client.post(
            url, data=body, content_type="application/x-www-form-urlencoded", headers=headers
        )
        assert response.status_code == 200
        assert response.content == b""
    row = ChatInteraction.objects.get(workspace=slack_workspace)
    assert (row.kind, row.action, row.repeats) == (InteractionKind.BUTTON, "ack", 1)


def test_a_modal_submission_is_recorded_and_closes_the_modal(client, slack_workspace):
    metadata = dialog_metadata(Dialog("Resolve", "resolve", {"incident": 5, "confirm": True}))
    payload = view_submission(view_id="V9", private_metadata=metadata, values={"reason": "ok"})
    response = slack_post(client, interactions_url(slack_workspace), payload_body(payload))
    assert response.status_code == 200
    assert response.content == b""  # an empty 200 closes the modal
    row = ChatInteraction.objects.get(workspace=slack_workspace)
    assert (row.kind, row.action) == (InteractionKind.DIALOG, "resolve")
    assert row.request["reason"] == "ok"


def test_a_forged_press_is_refused_and_not_recorded(client, slack_workspace):
    body = payload_body(block_actions(action_id="approve:0", value='{"run":3}'))
    response = slack_post(client, interactions_url(slack_workspace), body, secret="x" * 32)
    assert response.status_code == 401
    assert "forged" in response.json()["error"]
    assert not ChatInteraction.objects.exists()


def test_a_stale_signed_request_is_refused(client, slack_workspace):
    body = form_body(command_form("status"))
    old = int(time.time()) - 3600
    response = slack_post(client, commands_url(slack_workspace), body, timestamp=old)
    assert response.status_code == 401
    assert "stale" in response.json()["error"]


def test_an_unsigned_request_is_refused(client, slack_workspace):
    response = client.post(
        commands_url(slack_workspace),
        data=form_body(command_form("status")),
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 401
    assert "missing" in response.json()["error"]


def test_a_press_from_another_slack_team_is_refused(client, slack_workspace):
    body = payload_body(block_actions(action_id="ack:0", value="{}", team_id="T0OTHER"))
    response = slack_post(client, interactions_url(slack_workspace), body)
    assert response.status_code == 403


def test_a_malformed_payload_is_a_400_not_a_500(client, slack_workspace):
    body = b"payload=" + b"%7B%22type%22%3A"  # truncated JSON, properly signed
    response = slack_post(client, interactions_url(slack_workspace), body)
    assert response.status_code == 400
    assert "JSON" in response.json()["error"]


def test_a_command_slack_cannot_parse_is_answered_with_the_usage(client, slack_workspace):
    body = form_body(command_form("frobnicate everything"))
    response = slack_post(client, commands_url(slack_workspace), body)
    assert response.status_code == 200
    answer = response.json()
    assert answer["response_type"] == "ephemeral"
    assert "/incident" in answer["text"]
    assert not ChatInteraction.objects.exists()


def test_the_console_link_button_is_acknowledged_without_a_record(client, slack_workspace):
    body = payload_body(block_actions(action_id="open_link", value=""))
    response = slack_post(client, interactions_url(slack_workspace), body)
    assert response.status_code == 200
    assert not ChatInteraction.objects.exists()


def test_unknown_disabled_or_mattermost_workspaces_are_404(client, slack_workspace):
    body = form_body(command_form("status"))
    assert (
        slack_post(client, reverse("chatops:slack-commands", args=[999999]), body).status_code
        == 404
    )
    Workspace.objects.filter(pk=slack_workspace.pk).update(enabled=False)
    assert slack_post(client, commands_url(slack_workspace), body).status_code == 404
    Workspace.objects.filter(pk=slack_workspace.pk).update(enabled=True, surface=Surface.MATTERMOST)
    assert slack_post(client, commands_url(slack_workspace), body).status_code == 404


def test_only_post_and_at_most_a_megabyte(client, slack_workspace):
    assert client.get(commands_url(slack_workspace)).status_code == 405
    body = form_body({"text": "x" * (1024 * 1024)})
    response = slack_post(client, commands_url(slack_workspace), body)
    assert response.status_code == 413
    assert json.loads(response.content)["error"].startswith("body is larger")
