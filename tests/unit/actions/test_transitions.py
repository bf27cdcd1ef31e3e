"""The action-run transition table, walked through the services and the worker: each
allowed move is made by the service the table names; every other move is refused, by
`run_record` (the one writer of a run's status) and by each service, naming the move.

EXPECTED is written out here on purpose, apart from the table: a move added to or dropped
from actions/transitions.py fails these tests until this list agrees."""

from datetime import timedelta
from itertools import product

import pytest
from django.utils import timezone

from actions import execution, services
from actions.audit import run_record
from actions.guard import services as guard_services
from actions.models import ActionRun, ActionRunEvent, ActionRunStatus
from actions.transitions import ALLOWED, INITIAL
from console import roles
from console.errors import DomainError
from incidents.transitions import TransitionError
from tests.factories import IncidentFactory
from tests.helpers import task_callbacks

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
S = ActionRunStatus
SCALE = {"namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2}

EXPECTED = {
    ("awaiting_approval", "queued"): "action_run_approve",
    ("awaiting_approval", "rejected"): "action_run_reject",
    ("awaiting_approval", "cancelled"): "action_run_cancel",
    ("queued", "cancelled"): "action_run_cancel",
    ("queued", "running"): "action_run_execute",
    ("running", "succeeded"): "action_run_execute",
    ("running", "failed"): "action_run_execute",
}
STATUSES = [
    "awaiting_approval",
    "queued",
    "running",
    "succeeded",
    "failed",
    "cancelled",
    "rejected",
]
FORBIDDEN = [pair for pair in product(STATUSES, STATUSES) if pair not in EXPECTED]
# What each person's service moves a run to, and the start statuses it accepts.
PERSON = {
    "action_run_approve": ("queued", {"awaiting_approval"}),
    "action_run_reject": ("rejected", {"awaiting_approval"}),
    "action_run_cancel": ("cancelled", {"awaiting_approval", "queued"}),
}


@pytest.fixture
def people(make_user):
    return {
        "responder": make_user("rita", roles.RESPONDER),
        "commander": make_user("cara", roles.COMMANDER),
    }


def label(status: str) -> str:
    return S(status).label.lower()


def make_run(status: str, requester, target: str = "", **fields) -> ActionRun:
    now = timezone.now()
    return ActionRun.objects.create(
        incident=IncidentFactory(severity="SEV1"),
        kind="scale_lws",
        target=target or "leaderworkerset/llm-serving/vllm-chat",
        params=SCALE,
        idempotency_key=f"key-{status}-{now.timestamp()}",
        status=status,
        requested_by=requester,
        requested_at=now,
        requires_approval=True,
        **fields,
    )


def moves(run: ActionRun) -> list[tuple[str, str]]:
    events = ActionRunEvent.objects.filter(run=run).exclude(status_to="").order_by("id")
    return list(events.values_list("status_from", "status_to"))


def test_the_table_is_the_expected_one():
    assert {(str(a), str(b)): service for (a, b), service in ALLOWED.items()} == EXPECTED
    assert {str(s): service for s, service in INITIAL.items()} == {
        "awaiting_approval": "action_run_request",
        "queued": "action_run_request",
    }
    assert set(STATUSES) == set(S.values)


@pytest.mark.parametrize(
    ("severity", "status"), [("SEV3", "queued"), ("SEV1", "awaiting_approval")]
)
def test_a_request_creates_the_run_in_an_initial_status(people, severity, status):
    run, created = services.action_run_request(
        incident_id=IncidentFactory(severity=severity).pk,
        actor=people["responder"],
        kind="scale_lws",
        params=SCALE,
        idempotency_key="key-00000001",
    )
    assert created
    assert run.status == status
    assert INITIAL[run.status] == "action_run_request"


@pytest.mark.parametrize(("start", "to"), sorted(EXPECTED))
def test_run_record_makes_an_allowed_move(people, start, to):
    run = make_run(start, people["responder"])
    run_record(run, to=to, message="moved")
    run.refresh_from_db()
    assert run.status == to
    assert moves(run) == [(start, to)]


@pytest.mark.parametrize(("start", "to"), FORBIDDEN)
def test_run_record_refuses_a_move_the_table_does_not_allow(people, start, to):
    run = make_run(start, people["responder"])
    with pytest.raises(TransitionError) as refused:
        run_record(run, to=to, message="moved")
    assert f"Cannot move action run #{run.pk} from {label(start)} to {label(to)}:" in str(
        refused.value
    )
    assert refused.value.code == "invalid_transition"
    run.refresh_from_db()
    assert run.status == start
    assert not ActionRunEvent.objects.filter(run=run).exists()


@pytest.mark.parametrize(("move", "service"), sorted(ALLOWED.items()))
def test_each_allowed_move_is_made_by_the_service_the_table_names(
    people, request, settings, move, service
):
    start, to = move
    # A running run whose worker is gone (lease expired): the worker resumes it.
    lease = {"lease_expires_at": timezone.now() - timedelta(seconds=1)}
    run = make_run(start, people["responder"], **(lease if start == S.RUNNING else {}))
    if service == "action_run_execute":
        if to == S.SUCCEEDED:  # a real write needs a cluster: the simulated one
            sim = request.getfixturevalue("sim")
            settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
        # Without a cluster, a claimed run fails: queued -> running -> failed.
        execution.action_run_execute(run_id=run.pk, worker="test:1")
    else:
        getattr(services, service)(run_id=run.pk, actor=people["commander"], note="ok")
    run.refresh_from_db()
    assert (start, to) in moves(run)
    assert run.status == (S.FAILED if (start, to) == (S.QUEUED, S.RUNNING) else to)


@pytest.mark.parametrize(
    ("service", "start"),
    [(svc, s) for svc, (_, froms) in PERSON.items() for s in STATUSES if s not in froms],
)
def test_a_person_s_service_refuses_a_move_from_the_wrong_status(people, service, start):
    run = make_run(start, people["responder"])
    to = PERSON[service][0]
    with pytest.raises(DomainError) as refused:
        getattr(services, service)(run_id=run.pk, actor=people["commander"])
    assert isinstance(refused.value, TransitionError)
    assert f"from {label(start)} to {label(to)}" in str(refused.value)
    run.refresh_from_db()
    assert (run.status, run.decided_by) == (start, None)
    assert not ActionRunEvent.objects.filter(run=run).exists()


@pytest.mark.parametrize("start", [s for s in STATUSES if s not in ("queued", "running")])
def test_the_worker_leaves_a_run_it_cannot_move_as_it_is(people, start):
    """A redelivered task finds the run ended (or never approved): nothing to do."""
    run = make_run(start, people["responder"])
    execution.action_run_execute(run_id=run.pk, worker="test:1")
    run.refresh_from_db()
    assert (run.status, run.attempts) == (start, 0)
    assert not ActionRunEvent.objects.filter(run=run).exists()


def test_approve_and_reject_are_one_decision_that_differs_in_data(
    people, django_capture_on_commit_callbacks
):
    approved = make_run(S.AWAITING_APPROVAL, people["responder"])
    rejected = make_run(S.AWAITING_APPROVAL, people["responder"], target="other/target")
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        services.action_run_decide(
            run_id=approved.pk, actor=people["commander"], verdict="approve", note="go"
        )
        services.action_run_decide(
            run_id=rejected.pk, actor=people["commander"], verdict="reject", note="later"
        )
    assert len(task_callbacks(enqueued)) == 1  # only the approved run goes to the worker
    approved.refresh_from_db()
    rejected.refresh_from_db()
    assert approved.status == S.QUEUED
    assert approved.queued_at == approved.decided_at
    assert approved.finished_at is None
    assert rejected.status == S.REJECTED
    assert rejected.finished_at == rejected.decided_at
    assert rejected.queued_at is None
    said = ActionRunEvent.objects.filter(run__in=[approved, rejected]).order_by("run_id")
    assert [e.message for e in said] == ["Approved: go", "Rejected: later"]
    with pytest.raises(DomainError, match="verdict: one of approve, reject") as bad:
        services.action_run_decide(run_id=approved.pk, actor=people["commander"], verdict="ok")
    assert bad.value.code == "invalid_params"


def test_a_success_that_rolls_back_fails_from_running(people, sim, settings, monkeypatch):
    """The guard could not start after the write, so the success is rolled back: the run
    fails from the status the row still has, not from "succeeded" (a refused move)."""
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))

    def broken(**_):
        raise RuntimeError("guard table unavailable")

    monkeypatch.setattr(execution, "guard_watch_start", broken)
    assert guard_services.guard_watch_start is not broken  # only the worker's name is patched
    run = make_run(S.QUEUED, people["responder"])
    execution.action_run_execute(run_id=run.pk, worker="test:1")
    run.refresh_from_db()
    assert run.status == S.FAILED
    assert run.error_code == "internal"
    assert "guard table unavailable" in run.error
    assert moves(run) == [(S.QUEUED, S.RUNNING), (S.RUNNING, S.FAILED)]
