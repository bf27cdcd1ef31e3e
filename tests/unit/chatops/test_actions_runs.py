"""Remediation from chat (chatops/actions/runs.py): the recommended action's preview in a
Slack modal opened at once and filled after the preview, or on Mattermost a message with a
"Request it" button; the submission requests the run once; reject by a commander."""

import json
from uuid import uuid4

import pytest

from actions.models import ActionRun, ActionRunStatus
from chatops.models import InteractionKind, InteractionStatus, Surface, Workspace
from chatops.requests import ChatRequest
from chatops.services.interactions import interaction_receive, interaction_run
from console import roles
from tests.chat_mattermost_server import BOT_TOKEN, COMMAND_TOKEN
from tests.chat_mattermost_server import TEAM as MM_TEAM
from tests.chat_slack_server import CHANNEL
from tests.factories import AlertFactory, IncidentFactory
from tests.unit.chatops.core_helpers import answers, run

pytest_plugins = ["tests.unit.chatops.core_helpers"]
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("chat_env")]

S = InteractionStatus
LABELS = {"alertname": "VLLMHighTTFT", "namespace": "llm-serving", "lws": "vllm-chat"}


def ttft_incident(severity="SEV3"):
    incident = IncidentFactory(severity=severity, runbook="ttft-spike")
    AlertFactory(incident=incident, labels=LABELS)
    return incident


def test_request_opens_a_modal_at_once_then_shows_the_preview(
    slack_server, slack_workspace, people, sent
):
    incident = ttft_incident(severity="SEV1")
    value = {"incident": incident.pk, "kind": "scale_lws", "index": 0}
    shown = run(slack_workspace, slack_server, "request", value)
    assert shown.status == S.DONE, shown.outcome
    (opened,) = slack_server.calls_to("views.open")
    assert "Checking" in json.dumps(opened.body["view"])
    assert "submit" not in opened.body["view"]  # nothing to submit while loading
    (updated,) = slack_server.calls_to("views.update")
    view = updated.body["view"]
    words = json.dumps(view, ensure_ascii=False)
    assert "scale_lws" in words
    assert "leaderworkerset/llm-serving/vllm-chat" in words
    assert "needed: " in words
    assert "The incident is SEV1." in words
    assert "Not previewed" in words  # no cluster here: the preview says so
    metadata = json.loads(view["private_metadata"])
    assert metadata["action"] == "request_confirm"
    confirm = metadata["value"]
    assert confirm["params"] == {
        "namespace": "llm-serving",
        "lws": "vllm-chat",
        "replicas_delta": 2,
    }
    assert confirm["key"].startswith("chat-")
    # Slack's view_submission carries no channel and no response URL: the dialog's value
    # says where the answer goes.
    assert confirm["channel"] == CHANNEL
    assert not ActionRun.objects.exists()  # a preview requests nothing

    for _ in range(2):  # submitted twice (Slack's retry, a double click): one run
        done = run(slack_workspace, slack_server, "request_confirm", confirm,
                   kind=InteractionKind.DIALOG, reply=False,
                   channel=confirm["channel"])  # fmt: skip
        assert done.status == S.DONE
    told = [e for e in slack_server.ephemerals if e.get("channel") == CHANNEL]
    assert any("requested" in e.get("text", "") for e in told), told
    (made,) = ActionRun.objects.all()
    assert made.status == ActionRunStatus.AWAITING_APPROVAL
    assert made.requested_by == people["rita"]
    assert made.runbook == "ttft-spike"


def test_request_without_a_trigger_answers_the_preview_with_a_button(
    slack_server, slack_workspace, people, sent
):
    incident = ttft_incident()
    run(slack_workspace, slack_server, "request", {"incident": incident.pk, "index": 0},
        trigger=False)  # fmt: skip
    assert not slack_server.calls_to("views.open")
    (body,) = [b for bodies in slack_server.responses.values() for b in bodies]
    buttons = [e for b in body["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert buttons[0]["action_id"].startswith("request_confirm:")
    value = json.loads(buttons[0]["value"])
    assert value["kind"] == "scale_lws"
    assert value["key"].startswith("chat-")


def test_a_viewer_may_not_request(slack_server, slack_workspace, people, sent):
    incident = ttft_incident()
    refused = run(slack_workspace, slack_server, "request", {"incident": incident.pk, "index": 0},
                  user="UVIC")  # fmt: skip
    assert refused.status == S.REFUSED
    assert "request actions" in refused.outcome
    assert not slack_server.calls_to("views.open")  # refused before a modal opens


def test_an_unknown_action_number_is_refused(slack_server, slack_workspace, people, sent):
    incident = ttft_incident()
    refused = run(slack_workspace, slack_server, "request", {"incident": incident.pk, "index": 9})
    assert refused.status == S.REFUSED
    assert "has no action number" in answers(slack_server)[-1]


def test_mattermost_answers_the_preview_as_a_message(mattermost_server, make_user, sent, settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    make_user("rita", roles.RESPONDER, email="rita@example.com")
    person = mattermost_server.user_add(username="rita", email="rita@example.com",
                                        email_verified=True)  # fmt: skip
    channel = mattermost_server.channel_add("incidents")["id"]
    workspace = Workspace.objects.create(
        name="mm", surface=Surface.MATTERMOST, api_url=mattermost_server.url, bot_token=BOT_TOKEN,
        signing_secret=COMMAND_TOKEN, external_team=MM_TEAM, default_channel=channel,
    )  # fmt: skip
    incident = ttft_incident()
    request = ChatRequest(
        surface=Surface.MATTERMOST, workspace_id=workspace.pk, kind=InteractionKind.BUTTON,
        key=uuid4().hex, external_user=person["id"], action="request", incident_id=incident.pk,
        args={"incident": incident.pk, "index": 0}, channel=channel, trigger="mm-trigger-1",
    )  # fmt: skip
    interaction_run(interaction_id=interaction_receive(request=request).interaction_id)
    assert not mattermost_server.dialogs  # a Mattermost dialog cannot be filled in later
    (told,) = mattermost_server.ephemerals
    assert "Request it" in json.dumps(told["post"])
    assert "scale_lws" in json.dumps(told["post"])


def test_reject_by_a_commander(slack_server, slack_workspace, people, sent):
    incident = ttft_incident(severity="SEV1")
    params = {"namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2}
    value = {"incident": incident.pk, "kind": "scale_lws", "key": "chat-k0000009", "params": params}
    run(slack_workspace, slack_server, "request_confirm", value, kind=InteractionKind.DIALOG)
    made = ActionRun.objects.get()
    refused = run(slack_workspace, slack_server, "reject", {"run": made.pk}, user="URITA")
    assert refused.status == S.REFUSED  # the requester, and a responder: not theirs to decide
    done = run(slack_workspace, slack_server, "reject", {"run": made.pk}, user="UCARA")
    assert done.status == S.DONE
    made.refresh_from_db()
    assert made.status == ActionRunStatus.REJECTED
    assert made.decided_by == people["cara"]
    assert answers(slack_server)[-1] == f"Run #{made.pk} rejected."
