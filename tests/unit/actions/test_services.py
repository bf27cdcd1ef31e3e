"""The safety contract on the request side: idempotency, one active run per target,
approval policy, permissions, cancel and reject. No Kubernetes here (KUBECONFIG unset, so
the preview says "not configured" and the run is still recorded); the worker side and the
simulator are in tests/integration/actions/."""

import pytest
from django.core.exceptions import PermissionDenied

from actions import services
from actions.models import ActionRun, ActionRunEvent, ActionRunStatus
from actions.timeline_kinds import ACTION
from console import roles
from console.errors import DomainError
from incidents.models import TimelineEvent
from tests.factories import IncidentFactory
from tests.helpers import task_callbacks

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
S = ActionRunStatus
SCALE = {"namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2}


@pytest.fixture
def people(make_user):
    return {
        "viewer": make_user("vic", roles.VIEWER),
        "responder": make_user("rita", roles.RESPONDER),
        "responder2": make_user("ron", roles.RESPONDER),
        "commander": make_user("cara", roles.COMMANDER),
        "commander2": make_user("cole", roles.COMMANDER),
    }


def request(incident, actor, key="key-00000001", kind="scale_lws", params=None):
    run, _created = services.action_run_request(
        incident_id=incident.pk,
        actor=actor,
        kind=kind,
        params=dict(SCALE if params is None else params),
        idempotency_key=key,
    )
    return run


def test_a_request_on_a_sev3_incident_is_queued_at_once(people, django_capture_on_commit_callbacks):
    incident = IncidentFactory(severity="SEV3")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = request(incident, people["responder"])
    assert run.status == S.QUEUED
    assert not run.requires_approval
    assert run.target == "leaderworkerset/llm-serving/vllm-chat"
    assert len(task_callbacks(callbacks)) == 1  # enqueued when the transaction commits
    assert "not configured" in run.preview["error"]
    incident.refresh_from_db()
    assert incident.status == "acknowledged"  # reaching for a fix acknowledges
    assert incident.acknowledged_at is not None
    (event,) = TimelineEvent.objects.filter(incident=incident, kind=ACTION)
    assert TimelineEvent.objects.filter(incident=incident, kind="status_changed").exists()
    assert event.actor == people["responder"]
    assert "Requested" in event.message
    assert ActionRunEvent.objects.filter(run=run).count() == 1


def test_the_same_key_twice_is_one_run_and_a_reused_key_with_other_params_is_refused(people):
    incident = IncidentFactory(severity="SEV3")
    ask = {
        "incident_id": incident.pk,
        "actor": people["responder"],
        "kind": "scale_lws",
        "params": dict(SCALE),
        "idempotency_key": "key-00000001",
    }
    first, created = services.action_run_request(**ask)
    again, created_again = services.action_run_request(**ask)
    assert (again.pk, created, created_again) == (first.pk, True, False)
    assert ActionRun.objects.count() == 1
    with pytest.raises(DomainError, match="idempotency_key was already used") as exc:
        request(incident, people["responder"], params={**SCALE, "replicas_delta": 3})
    assert exc.value.code == "conflict"


def test_a_second_run_on_a_busy_target_is_refused_with_the_run_it_waits_for(people):
    incident = IncidentFactory(severity="SEV3")
    first = request(incident, people["responder"])
    with pytest.raises(DomainError) as exc:
        request(
            incident,
            people["responder2"],
            key="key-00000002",
            kind="set_enforce_eager",
            params={"namespace": "llm-serving", "lws": "vllm-chat", "enabled": True},
        )
    assert exc.value.code == "busy"
    assert f"#{first.pk} scale_lws" in str(exc.value)
    assert "rita" in str(exc.value)
    # Another target is free.
    other = request(
        incident, people["responder2"], key="key-00000003", params={**SCALE, "lws": "vllm-long"}
    )
    assert other.status == S.QUEUED


@pytest.mark.parametrize(
    ("severity", "kind", "params", "reason"),
    [
        ("SEV1", "scale_lws", SCALE, "The incident is SEV1."),
        ("SEV3", "cordon_node", {"node": "gpu-node-3", "reason": "ECC"}, "risky"),
    ],
)
def test_sev1_incidents_and_risky_kinds_wait_for_approval(people, severity, kind, params, reason):
    incident = IncidentFactory(severity=severity)
    run = request(incident, people["responder"], kind=kind, params=params)
    assert run.status == S.AWAITING_APPROVAL
    assert run.requires_approval
    assert reason in run.approval_reason


def test_only_another_commander_approves(people, django_capture_on_commit_callbacks):
    incident = IncidentFactory(severity="SEV1")
    run = request(incident, people["commander"])
    with pytest.raises(PermissionDenied, match="someone else with the commander role must approve"):
        services.action_run_approve(run_id=run.pk, actor=people["commander"])
    with pytest.raises(PermissionDenied, match="your role cannot approve"):
        services.action_run_approve(run_id=run.pk, actor=people["responder"])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.action_run_approve(run_id=run.pk, actor=people["commander2"], note="go")
    run.refresh_from_db()
    assert run.status == S.QUEUED
    assert run.decided_by == people["commander2"]
    assert len(task_callbacks(callbacks)) == 1
    with pytest.raises(DomainError, match="not awaiting approval"):
        services.action_run_approve(run_id=run.pk, actor=people["commander2"])


def test_reject_ends_the_run_and_frees_the_target(people):
    incident = IncidentFactory(severity="SEV1")
    run = request(incident, people["responder"])
    services.action_run_reject(run_id=run.pk, actor=people["commander"], note="scale later")
    run.refresh_from_db()
    assert run.status == S.REJECTED
    assert run.finished_at is not None
    assert request(incident, people["responder"], key="key-00000009").status == (
        S.AWAITING_APPROVAL
    )


def test_cancel_by_requester_or_commander_only_before_it_starts(people):
    incident = IncidentFactory(severity="SEV3")
    run = request(incident, people["responder"])
    with pytest.raises(PermissionDenied):
        services.action_run_cancel(run_id=run.pk, actor=people["responder2"])
    services.action_run_cancel(run_id=run.pk, actor=people["responder"])
    run.refresh_from_db()
    assert run.status == S.CANCELLED
    with pytest.raises(DomainError, match="only a run that has not started"):
        services.action_run_cancel(run_id=run.pk, actor=people["commander"])


def test_viewers_cannot_request_and_bad_input_is_named(people):
    incident = IncidentFactory(severity="SEV3")
    with pytest.raises(PermissionDenied):
        request(incident, people["viewer"])
    with pytest.raises(DomainError, match="replicas_delta") as exc:
        request(incident, people["responder"], params={**SCALE, "replicas_delta": "many"})
    assert exc.value.code == "invalid_params"
    with pytest.raises(DomainError, match="idempotency_key"):
        request(incident, people["responder"], key="short")
    with pytest.raises(DomainError, match="does not exist") as exc:
        services.action_run_request(
            incident_id=999999,
            actor=people["responder"],
            kind="scale_lws",
            params=SCALE,
            idempotency_key="key-00000001",
        )
    assert exc.value.code == "not_found"
    assert ActionRun.objects.count() == 0


def test_a_resolved_incident_takes_no_actions(people):
    incident = IncidentFactory(severity="SEV3", status="resolved")
    with pytest.raises(DomainError, match="reopen it"):
        request(incident, people["responder"])


def test_undo_needs_a_succeeded_run(people):
    incident = IncidentFactory(severity="SEV3")
    run = request(incident, people["responder"])
    with pytest.raises(DomainError, match="only a run that succeeded"):
        services.action_run_undo(run_id=run.pk, actor=people["responder"], idempotency_key="k" * 10)


def test_audit_events_are_append_only(people):
    run = request(IncidentFactory(severity="SEV3"), people["responder"])
    event = ActionRunEvent.objects.get(run=run)
    with pytest.raises(RuntimeError):
        event.save()
    with pytest.raises(RuntimeError):
        event.delete()
