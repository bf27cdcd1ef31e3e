"""The incident's state message (chatops/threads/state.py): what it says, its buttons by
state, its digest, and a fixed number of queries."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from actions.guard.models import GuardWatch
from actions.models import ActionRun, ActionRunStatus
from chatops.threads.state import incident_state, state_digest
from incidents.models import TimelineEvent
from runbooks.timeline_kinds import AUTO_TRIAGE
from tests.factories import AlertFactory, IncidentFactory

pytestmark = pytest.mark.django_db
CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo"
LABELS = {"namespace": "llm-serving", "lws": "vllm-chat"}


def fields(message) -> dict[str, str]:
    return dict(message.fields)


def actions(message) -> list[str]:
    return [b.action for b in message.buttons]


def triaged(incident, branch: str = "capacity_lost", kinds: tuple[str, ...] = ("scale_lws",)):
    TimelineEvent.objects.create(
        incident=incident, kind=AUTO_TRIAGE, occurred_at=timezone.now(), source="auto-triage",
        message=f"Auto-triage (ttft-spike): {branch}",
        payload={"runbook": "ttft-spike", "branch": branch, "diagnosis": "",
                 "recommended": [{"kind": k, "index": 0, "title": "", "params": {}}
                                 for k in kinds], "prometheus_error": ""},
    )  # fmt: skip


def pending_run(incident, user, n: int = 1) -> ActionRun:
    now = timezone.now()
    return ActionRun.objects.create(
        incident=incident, kind="scale_lws", target=f"leaderworkerset/llm-serving/vllm-{n}",
        params={}, idempotency_key=f"k{n}", status=ActionRunStatus.AWAITING_APPROVAL,
        requested_by=user, requested_at=now, requires_approval=True,
    )  # fmt: skip


def test_a_triggered_incident_says_its_state_and_offers_what_fits(make_user):
    incident = IncidentFactory(title="TTFT p99 above 2s", severity="SEV2")
    for pod in ("vllm-chat-0", "vllm-chat-1"):
        AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", "pod": pod})
    message = incident_state(incident_id=incident.pk, language="en")
    assert message.title == f"#{incident.pk} TTFT p99 above 2s"
    said = fields(message)
    assert said["Status"] == "Triggered"
    assert said["Severity"].startswith("SEV2")
    assert said["Commander"] == "nobody"
    assert said["Firing alerts"].startswith("2: VLLMHighTTFT (pod=vllm-chat-")
    assert said["Triage"].endswith("not evaluated yet")
    assert message.link.endswith(f"/incidents/{incident.pk}/")
    assert message.color == "#b45309"
    assert actions(message) == ["ack", "command", "silence", "silence", "mitigate", "resolve"]
    silences = [b for b in message.buttons if b.action == "silence"]
    assert [b.value["minutes"] for b in silences] == [60, 240]
    assert [b.label for b in silences] == ["Silence 1 h", "Silence 4 h"]
    resolve = message.buttons[-1]
    assert resolve.value == {"incident": incident.pk}
    assert "2 alerts still fire" in resolve.confirm  # the chat asks before sending


def test_no_confirmation_when_nothing_fires_and_no_ack_once_acknowledged(make_user):
    alice = make_user("alice")
    incident = IncidentFactory(status="acknowledged", commander=alice)
    message = incident_state(incident_id=incident.pk, language="en")
    assert fields(message)["Commander"] == "alice"
    assert fields(message)["Firing alerts"] == "none"
    assert actions(message) == ["silence", "silence", "mitigate", "resolve"]
    assert all(not b.confirm for b in message.buttons)


def test_a_resolved_incident_has_no_buttons_and_reads_done():
    incident = IncidentFactory(status="resolved", severity="SEV1")
    message = incident_state(incident_id=incident.pk, language="en")
    assert message.buttons == ()
    assert message.color == "#1b7a3d"
    assert fields(message)["Status"] == "Resolved"


def test_triage_recommended_action_approvals_and_guard(make_user, settings):
    settings.ACTIONS_APPROVAL_SEVERITIES = ["SEV1"]
    settings.ACTIONS_APPROVAL_KINDS = []
    bob = make_user("bob")
    incident = IncidentFactory(severity="SEV2", group_labels=LABELS, is_drill=True)
    AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", **LABELS})
    triaged(incident)
    runs = [pending_run(incident, bob, n) for n in (1, 2)]
    GuardWatch.objects.create(
        incident=incident, run=None, runbook="ttft-spike", subject="leaderworkerset/x/y",
        changed_at=timezone.now(), ends_at=timezone.now() + timedelta(minutes=10),
        interval_seconds=30, verdict="breached", verdict_reason="TTFT p99 rose to 3.1 s",
    )  # fmt: skip
    message = incident_state(incident_id=incident.pk, language="en")
    said = fields(message)
    assert message.title.endswith("[Drill]")
    assert said["Triage"].startswith(
        "Time to first token spikes while decoding stays fast: capacity_lost — Saturated"
    )
    assert said["Recommended action"] == (
        "Add two groups to the pool [scale_lws namespace=llm-serving, lws=vllm-chat, "
        "replicas_delta=2] (no approval needed)"
    )
    assert said["Waiting for approval"] == (
        f"#{runs[0].pk} scale_lws leaderworkerset/llm-serving/vllm-1, requested by bob; "
        f"#{runs[1].pk} scale_lws leaderworkerset/llm-serving/vllm-2, requested by bob"
    )
    assert said["Guard"] == "leaderworkerset/x/y: Breached — TTFT p99 rose to 3.1 s"
    request = next(b for b in message.buttons if b.action == "request")
    assert request.label == "Request scale_lws"
    assert request.value == {"incident": incident.pk, "kind": "scale_lws", "index": 0}
    decide = [(b.action, b.label, b.style, b.value) for b in message.buttons[-4:]]
    assert decide == [
        ("approve", f"Approve #{runs[0].pk}", "primary", {"run": runs[0].pk}),
        ("reject", f"Reject #{runs[0].pk}", "danger", {"run": runs[0].pk}),
        ("approve", f"Approve #{runs[1].pk}", "primary", {"run": runs[1].pk}),
        ("reject", f"Reject #{runs[1].pk}", "danger", {"run": runs[1].pk}),
    ]


def test_a_sev1_recommended_action_needs_approval(settings):
    settings.ACTIONS_APPROVAL_SEVERITIES = ["SEV1"]
    incident = IncidentFactory(severity="SEV1", group_labels=LABELS)
    triaged(incident)
    said = fields(incident_state(incident_id=incident.pk, language="en"))
    assert said["Recommended action"].endswith("(not ready: needs label lws)")
    AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", **LABELS})
    said = fields(incident_state(incident_id=incident.pk, language="en"))
    assert "(needs a second person's approval: " in said["Recommended action"]
    assert "The incident is SEV1." in said["Recommended action"]


def test_a_fixed_number_of_queries(make_user, django_assert_max_num_queries, settings):
    settings.NOTIFY_CONSOLE_URL = ""
    bob = make_user("bob")
    incident = IncidentFactory(severity="SEV2", group_labels=LABELS)
    for n in range(30):
        AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", "pod": f"p{n}"})
    triaged(incident)
    for n in range(4):
        pending_run(incident, bob, n)
    # incident, alerts, firing count, last auto-triage, the policy's look, pending runs,
    # the guard, the console's address.
    with django_assert_max_num_queries(8):
        message = incident_state(incident_id=incident.pk, language="en")
    assert fields(message)["Firing alerts"].startswith("30: ")
    assert fields(message)["Firing alerts"].endswith("and 25 more")


def test_the_digest_changes_with_the_state_only():
    incident = IncidentFactory()
    first = incident_state(incident_id=incident.pk, language="en")
    assert state_digest(first) == state_digest(
        incident_state(incident_id=incident.pk, language="en")
    )
    incident.status = "acknowledged"
    incident.save()
    assert state_digest(first) != state_digest(
        incident_state(incident_id=incident.pk, language="en")
    )


@pytest.mark.skipif(not CATALOGUE.exists(), reason="django.mo is not compiled yet")
def test_the_state_in_chinese():
    incident = IncidentFactory()
    message = incident_state(incident_id=incident.pk, language="zh-hans")
    said = fields(message)
    assert said["状态"] == "已触发"
    assert "指挥官" in said
    assert any(b.label == "认领" for b in message.buttons)
