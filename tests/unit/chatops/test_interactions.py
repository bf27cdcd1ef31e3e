"""A request from chat end to end below the surface's view: recorded once
(interaction_receive), run once on the worker (interaction_run) as the mapped console
user, refused by the same rules as the web, audited, answered. The chat is the local
Slack (or Mattermost) server spoken to through the real client libraries; the broker is
replaced by a list of the tasks sent."""

from datetime import timedelta
from uuid import uuid4

import pytest
from django.utils import timezone

from actions.dispatch import ACTION_RUN_EXECUTE
from actions.models import ActionRun, ActionRunStatus
from chatops.models import (
    ChatIdentity,
    ChatInteraction,
    InteractionKind,
    InteractionStatus,
    MappedBy,
    Surface,
    Workspace,
)
from chatops.requests import ChatRequest
from chatops.services.interactions import (
    TASK,
    interaction_receive,
    interaction_run,
    interactions_requeue,
)
from console import roles
from console.audit.models import AuditMethod
from console.preferences.services import preference_set
from incidents.models import IncidentStatus, TimelineEvent
from tests.chat_mattermost_server import BOT_TOKEN, COMMAND_TOKEN
from tests.chat_mattermost_server import TEAM as MM_TEAM
from tests.factories import AlertFactory, IncidentFactory
from tests.unit.chatops.core_helpers import CATALOGUE, answers, ask, audit_rows, run

pytest_plugins = ["tests.unit.chatops.core_helpers"]
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("chat_env"),
]  # the worker calls out after commit

S = InteractionStatus
SCALE = {"namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2}


def test_unmapped_user_may_read_but_not_act(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory()
    refused = run(slack_workspace, slack_server, "ack", {"incident": incident.pk}, user="UNOBODY")
    assert refused.status == S.REFUSED
    assert refused.user is None
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.TRIGGERED
    told = answers(slack_server)[-1]
    assert "not linked to a console account" in told
    assert "/admin/chatops/chatidentity/" in told
    shown = run(slack_workspace, slack_server, "status", {"incident": incident.pk}, user="UNOBODY")
    assert shown.status == S.DONE
    assert f"#{incident.pk}" in answers(slack_server)[-1]
    first, second = audit_rows()
    assert (first.user, first.method, first.new["status"]) == (None, AuditMethod.SLACK, "refused")
    assert first.username == "stranger"
    assert first.reason.startswith(f"ack #{incident.pk}: not linked")
    assert second.new["action"] == "status"
    assert second.new["status"] == "done"


def test_ack_from_chat_is_on_the_timeline_from_slack(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory()
    done = run(slack_workspace, slack_server, "ack", {"incident": incident.pk})
    assert done.status == S.DONE
    assert done.user == people["rita"]
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.ACKNOWLEDGED
    event = TimelineEvent.objects.get(incident=incident, kind="status_changed")
    assert (event.source, event.actor) == ("slack", people["rita"])
    assert f"Incident #{incident.pk} acknowledged." in answers(slack_server)
    (row,) = audit_rows()
    assert row.user == people["rita"]
    assert row.method == AuditMethod.SLACK
    assert row.new == {
        "surface": "slack", "workspace": slack_workspace.pk, "action": "ack",
        "incident": incident.pk, "run": None, "status": "done", "chat_user": "URITA",
    }  # fmt: skip
    assert ChatIdentity.objects.get(external_user="URITA").mapped_by == MappedBy.EMAIL


def test_a_viewer_is_refused_by_the_role_check(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory()
    refused = run(slack_workspace, slack_server, "ack", {"incident": incident.pk}, user="UVIC")
    assert refused.status == S.REFUSED
    assert refused.outcome == "Your role does not allow you to acknowledge incidents."
    assert answers(slack_server)[-1] == "Your role does not allow you to acknowledge incidents."


def test_four_eyes_from_chat(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory(severity="SEV1")  # ACTIONS_APPROVAL_SEVERITIES
    value = {"incident": incident.pk, "kind": "scale_lws", "params": SCALE, "key": "chat-k0000001"}
    asked = run(slack_workspace, slack_server, "request_confirm", value, user="UCARA",
                kind=InteractionKind.DIALOG)  # fmt: skip
    assert asked.status == S.DONE, asked.outcome
    run_ = ActionRun.objects.get()
    assert run_.status == ActionRunStatus.AWAITING_APPROVAL
    assert run_.requested_by == people["cara"]
    assert "waits for approval" in answers(slack_server)[-1]

    own = run(slack_workspace, slack_server, "approve", {"run": run_.pk}, user="UCARA")
    assert own.status == S.REFUSED
    assert own.outcome == (
        "You requested this run; someone else with the commander role must approve it."
    )
    assert answers(slack_server)[-1] == own.outcome
    assert own.incident_id == incident.pk
    run_.refresh_from_db()
    assert run_.status == ActionRunStatus.AWAITING_APPROVAL

    other = run(slack_workspace, slack_server, "approve", {"run": run_.pk}, user="UCOLE")
    assert other.status == S.DONE
    run_.refresh_from_db()
    assert run_.status == ActionRunStatus.QUEUED
    assert run_.decided_by == people["cole"]
    again = run(slack_workspace, slack_server, "approve", {"run": run_.pk}, user="UCOLE")
    assert again.status == S.REFUSED
    assert [t for t in sent if t[0] == ACTION_RUN_EXECUTE] == [(ACTION_RUN_EXECUTE, (run_.pk,))]
    audit = audit_rows()
    assert [a.new["status"] for a in audit] == ["done", "refused", "done", "refused"]
    assert {a.new["run"] for a in audit} == {run_.pk}


def test_the_same_request_twice_is_recorded_and_run_once(
    slack_server, slack_workspace, people, sent
):
    incident = IncidentFactory(severity="SEV3")
    first = ask(slack_workspace, slack_server, "ack", {"incident": incident.pk}, key="T-1")
    again = ask(slack_workspace, slack_server, "ack", {"incident": incident.pk}, key="T-1")
    assert (first.duplicate, again.duplicate) == (False, True)
    assert again.interaction_id == first.interaction_id
    assert again.ack_text == ""
    assert [t for t in sent if t[0] == TASK] == [(TASK, (first.interaction_id,))]
    assert ChatInteraction.objects.get().repeats == 1
    interaction_run(interaction_id=first.interaction_id)
    interaction_run(interaction_id=first.interaction_id)  # a redelivered task
    assert len(audit_rows()) == 1
    assert TimelineEvent.objects.filter(incident=incident, kind="status_changed").count() == 1


def test_a_dialog_submitted_twice_is_one_run(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory(severity="SEV3")
    value = {"incident": incident.pk, "kind": "scale_lws", "params": SCALE, "key": "chat-k0000002"}
    for _ in range(2):  # two submissions (two keys) carrying the dialog's one run key
        run(slack_workspace, slack_server, "request_confirm", value, kind=InteractionKind.DIALOG)
    assert ActionRun.objects.count() == 1
    assert "already requested" in answers(slack_server)[-1]


def test_command_ack_text_is_in_the_users_language(slack_server, slack_workspace, people, sent):
    receipt = ask(slack_workspace, slack_server, "help", kind=InteractionKind.COMMAND)
    assert receipt.ack_text == "Working on it…"
    assert ask(slack_workspace, slack_server, "ack", {"incident": 1}).ack_text == ""


def test_rate_limit(slack_server, slack_workspace, people, sent, settings):
    settings.CHAT_ACTIONS_PER_MINUTE = 2
    incidents = [IncidentFactory(severity="SEV3") for _ in range(3)]
    for incident in incidents[:2]:
        assert run(slack_workspace, slack_server, "ack", {"incident": incident.pk}).status == S.DONE
    # Reading is not counted.
    assert run(slack_workspace, slack_server, "status").status == S.DONE
    slow = run(slack_workspace, slack_server, "ack", {"incident": incidents[2].pk})
    assert slow.status == S.REFUSED
    assert "Slow down" in answers(slack_server)[-1]
    assert "Try again in" in answers(slack_server)[-1]
    incidents[2].refresh_from_db()
    assert incidents[2].status == IncidentStatus.TRIGGERED
    # Another chat user is not slowed by rita.
    other = run(slack_workspace, slack_server, "ack", {"incident": incidents[2].pk}, user="UCARA")
    assert other.status == S.DONE


def test_resolve_while_firing_asks_for_a_reason(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory(severity="SEV3")
    AlertFactory(incident=incident)
    asked = run(slack_workspace, slack_server, "resolve", {"incident": incident.pk}, user="UCARA")
    assert asked.status == S.REFUSED
    (opened,) = slack_server.calls_to("views.open")
    view = opened.body["view"]
    assert "still firing" in str(view["blocks"])
    assert any(b.get("block_id") == "reason" for b in view["blocks"])
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.TRIGGERED
    # The dialog's submission: its value and the reason typed.
    submitted = {"incident": incident.pk, "confirm": True, "reason": "rolled back the config"}
    done = run(slack_workspace, slack_server, "resolve", submitted, user="UCARA",
               kind=InteractionKind.DIALOG)  # fmt: skip
    assert done.status == S.DONE, done.outcome
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.RESOLVED
    event = TimelineEvent.objects.filter(incident=incident, kind="status_changed").last()
    assert "rolled back the config" in event.message
    assert event.source == "slack"


def test_resolve_while_firing_without_a_trigger_answers_a_button(
    slack_server, slack_workspace, people, sent
):
    incident = IncidentFactory(severity="SEV3")
    AlertFactory(incident=incident)
    asked = run(slack_workspace, slack_server, "resolve", {"incident": incident.pk}, user="UCARA",
                trigger=False)  # fmt: skip
    assert asked.status == S.REFUSED
    assert not slack_server.calls_to("views.open")
    (body,) = [b for bodies in slack_server.responses.values() for b in bodies]
    assert "still firing" in body["text"]
    buttons = [e for b in body["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert buttons[0]["action_id"].startswith("resolve:")
    assert '"confirm":true' in buttons[0]["value"]


@pytest.mark.skipif(not CATALOGUE.exists(), reason="django.mo is not compiled yet")
def test_a_chinese_users_answer_is_chinese(slack_server, slack_workspace, people, sent):
    preference_set(user=people["vic"], language="zh-hans")
    incident = IncidentFactory()
    run(slack_workspace, slack_server, "ack", {"incident": incident.pk}, user="UVIC")
    assert answers(slack_server)[-1] == "你的角色无权认领事件。"
    (row,) = audit_rows()
    assert "Your role does not allow" in row.reason  # the audit log stays English


def test_a_nul_typed_in_chat_is_dropped_before_it_is_recorded(
    slack_server, slack_workspace, people, sent
):
    incident = IncidentFactory()
    done = run(slack_workspace, slack_server, "note", {"incident": incident.pk, "text": "a\x00b"})
    assert done.status == S.DONE
    assert TimelineEvent.objects.get(incident=incident, kind="note").message == "ab"


def test_an_unexpected_error_is_failed_logged_and_answered(
    slack_server, slack_workspace, people, sent, settings, caplog
):
    settings.CHAT_ACTIONS_PER_MINUTE = "twenty"  # a broken setting stands for any bug
    incident = IncidentFactory()
    failed = run(slack_workspace, slack_server, "ack", {"incident": incident.pk})
    assert failed.status == S.FAILED
    assert failed.outcome.startswith("failed: TypeError")
    assert "Something went wrong; it is logged." in answers(slack_server)[-1]
    assert f"interaction {failed.pk} (ack) failed" in caplog.text
    assert audit_rows()[-1].new["status"] == "failed"
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.TRIGGERED


def test_requeue_queues_a_request_nobody_ran(slack_server, slack_workspace, people, sent, settings):
    settings.CHAT_REQUEUE_SECONDS = 0
    receipt = ask(slack_workspace, slack_server, "status")
    sent.clear()
    assert interactions_requeue() == 1
    assert sent == [(TASK, (receipt.interaction_id,))]


def test_mattermost_actions_are_audited_as_mattermost(mattermost_server, make_user, sent):
    rita = make_user("rita", roles.RESPONDER, email="rita@example.com")
    person = mattermost_server.user_add(username="rita", email="rita@example.com",
                                        email_verified=True)  # fmt: skip
    channel = mattermost_server.channel_add("incidents")["id"]
    workspace = Workspace.objects.create(
        name="mm", surface=Surface.MATTERMOST, api_url=mattermost_server.url, bot_token=BOT_TOKEN,
        signing_secret=COMMAND_TOKEN, external_team=MM_TEAM, default_channel=channel,
    )  # fmt: skip
    incident = IncidentFactory(severity="SEV3")
    request = ChatRequest(
        surface=Surface.MATTERMOST, workspace_id=workspace.pk, kind=InteractionKind.BUTTON,
        key=uuid4().hex, external_user=person["id"], action="ack", incident_id=incident.pk,
        args={"incident": incident.pk}, channel=channel,
    )  # fmt: skip
    receipt = interaction_receive(request=request)
    interaction_run(interaction_id=receipt.interaction_id)
    (row,) = audit_rows()
    assert (row.method, row.user, row.new["surface"]) == (
        AuditMethod.MATTERMOST,
        rita,
        "mattermost",
    )
    event = TimelineEvent.objects.get(incident=incident, kind="status_changed")
    assert event.source == "mattermost"
    (told,) = mattermost_server.ephemerals
    assert told["user_id"] == person["id"]
    assert f"#{incident.pk} acknowledged" in str(told["post"])


def test_requeue_gives_up_a_request_whose_worker_died(slack_server, slack_workspace, people, sent):
    receipt = ask(slack_workspace, slack_server, "ack", {"incident": IncidentFactory().pk})
    old = timezone.now() - timedelta(minutes=30)
    ChatInteraction.objects.update(done_at=old)  # claimed long ago, never finished
    interactions_requeue()
    interactions_requeue()  # the next beat finds nothing more to do
    interaction = ChatInteraction.objects.get(pk=receipt.interaction_id)
    assert interaction.status == S.FAILED
    assert interaction.outcome == "failed: the worker stopped while running it"
    assert answers(slack_server) == ["Something went wrong; it is logged."]
    assert len(audit_rows()) == 1
