"""Drills against the real fleet simulator over HTTP (its Kubernetes API and its /sim
controls), incidents opened by Alertmanager-shaped webhook bodies, PostgreSQL."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied

from actions.k8s import kube_api
from actions.models import ActionRun, ActionRunStatus
from console import roles
from console.errors import DomainError
from drills import execution, services
from drills.models import DrillPlan, DrillRun, DrillRunStatus
from drills.selectors import drill_last_passed
from drills.timeline_kinds import DRILL
from incidents.models import Incident
from incidents.services import incident_acknowledge, incident_event_record
from runbooks.timeline_kinds import DIAGNOSIS_CONFIRMED
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db
LABEL_PATH = "/metadata/labels/console.llm~1drill-target"


@pytest.fixture
def drills(sim, settings):
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 5
    settings.DRILLS_SIMULATOR_URL = sim.url
    return sim


def active(sim) -> list[str]:
    return [s["slug"] for s in sim.sim.control("GET", ["status"])[1]["active_scenarios"]]


def plan_for(actor, **kw) -> DrillPlan:
    fields = {"runbook": "ttft-spike", "title": "", "namespace": "llm-serving",
              "lws": "vllm-chat", "fault": "ttft-spike", **kw}  # fmt: skip
    return services.drill_plan_create(actor=actor, **fields)


def fire(post_webhook, *, status="firing", lws="vllm-chat", severity="critical", key="drill"):
    body = notification(
        [alert(status=status, severity=severity, extra_labels={"lws": lws})],
        group_key=f'{{}}:{{alertname="VLLMHighTTFT", lws="{lws}", k="{key}"}}',
    )
    body["groupLabels"]["lws"] = lws
    response = post_webhook(body)
    assert response.status_code == 200, response.content
    return Incident.objects.get(pk=response.json()["incidents"][0])


def test_an_unlabelled_target_is_refused_at_planning_and_at_start(drills, commander):
    plan = plan_for(commander)
    # Off through the Kubernetes API, as someone would on a cluster.
    kube_api().patch_lws("llm-serving", "vllm-chat", [{"op": "remove", "path": LABEL_PATH}])
    with pytest.raises(DomainError, match="not labelled as a drill target"):
        plan_for(commander)
    with pytest.raises(DomainError, match=r"console\.llm/drill-target"):
        services.drill_start(plan_id=plan.pk, actor=commander)
    assert not DrillRun.objects.exists()
    assert active(drills) == []


def test_a_fault_aimed_at_another_pool_is_refused(drills, commander):
    with pytest.raises(
        DomainError, match="acts on llm-serving/vllm-chat, not on llm-serving/vllm-long"
    ):
        plan_for(commander, lws="vllm-long")


def test_only_commanders_plan_start_and_stop(drills, commander, make_user):
    plan = plan_for(commander)
    for role in (roles.VIEWER, roles.RESPONDER):
        user = make_user(f"u-{role}", role)
        with pytest.raises(PermissionDenied):
            plan_for(user)
        with pytest.raises(PermissionDenied):
            services.drill_start(plan_id=plan.pk, actor=user)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    with pytest.raises(PermissionDenied):
        services.drill_stop(run_id=run.pk, actor=make_user("rita", roles.RESPONDER))
    with pytest.raises(DomainError, match="already starting"):
        services.drill_start(plan_id=plan.pk, actor=commander)


def test_a_drill_that_recovers_in_time_passes_with_evidence(drills, commander, post_webhook):
    plan = plan_for(commander, expected_branch="")
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    execution.drill_run_inject(run_id=run.pk)
    assert active(drills) == ["ttft-spike"]

    incident = fire(post_webhook)
    run = execution.drill_run_check(run_id=run.pk)
    incident.refresh_from_db()
    assert run.incident_id == incident.pk
    assert incident.is_drill
    assert incident.events.filter(kind=DRILL).exists()

    incident_acknowledge(incident_id=incident.pk, actor=commander)
    incident_event_record(
        incident_id=incident.pk, kind=DIAGNOSIS_CONFIRMED, actor=commander,
        message="Diagnosis confirmed", payload={"runbook": "ttft-spike", "branch": "capacity"},
    )  # fmt: skip
    fix = ActionRun.objects.create(
        incident=incident, kind="scale_lws", target="leaderworkerset/llm-serving/vllm-chat",
        idempotency_key="drill-fix-1", status=ActionRunStatus.SUCCEEDED, requested_by=commander,
        requested_at=incident.triggered_at, finished_at=incident.triggered_at,
    )  # fmt: skip
    fire(post_webhook, status="resolved")
    run = execution.drill_run_check(run_id=run.pk)

    assert run.status == DrillRunStatus.FINISHED
    assert run.passed, run.scorecard
    assert active(drills) == []  # the fault is cleared
    card = {c["id"]: c for c in run.scorecard["criteria"]}
    assert set(card) == {"detected", "acknowledged", "runbook", "branch", "fix_applied",
                         "recovered", "no_undo"}  # fmt: skip
    assert card["fix_applied"]["links"][0]["url"] == f"/runbooks/actions/{fix.pk}/"
    assert card["detected"]["values"]["seconds"] is not None
    assert run.scorecard["measurements"]["mttr_seconds"] is not None
    assert drill_last_passed(namespace="llm-serving", lws="vllm-chat", runbook="ttft-spike") == run
    assert run.outcome == "passed"
    kinds = [e.payload.get("step") for e in incident.events.filter(kind=DRILL)]
    assert kinds == ["linked", "cleared", "condition_cleared", "scored"]


def test_the_drill_stops_itself_after_its_maximum_duration(drills, commander):
    plan = plan_for(commander, max_duration_seconds=60)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    execution.drill_run_inject(run_id=run.pk)
    DrillRun.objects.filter(pk=run.pk).update(injected_at=run.started_at - timedelta(seconds=61))

    run = execution.drill_run_check(run_id=run.pk)

    assert run.status == DrillRunStatus.FINISHED
    # A timeout is an abort with its reason, not a failed scorecard (issue 25).
    assert run.outcome == "aborted"
    assert run.passed is None
    assert "maximum of 60 s" in run.stop_reason
    assert run.scorecard["aborted_reason"] == run.stop_reason
    assert active(drills) == []
    card = {c["id"]: c for c in run.scorecard["criteria"]}
    assert card["detected"]["evidence"] == "no incident was opened"  # measured, not judged
    assert [e.kind for e in run.events.all()][-4:] == [
        "stop_requested", "cleared", "condition_cleared", "scored",
    ]  # fmt: skip
    assert "ABORTED" in run.events.get(kind="scored").message


def test_a_real_sev1_stops_the_drill_and_stays_real(drills, commander, post_webhook):
    plan = plan_for(commander)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    execution.drill_run_inject(run_id=run.pk)
    real = fire(post_webhook, lws="vllm-long", key="real")

    run = execution.drill_run_check(run_id=run.pk)

    assert run.status == DrillRunStatus.FINISHED
    assert f"real SEV1 incident #{real.pk}" in run.stop_reason
    real.refresh_from_db()
    assert not real.is_drill
    assert run.incident_id is None
    assert active(drills) == []


def test_the_stop_button_clears_the_fault_and_says_so_on_the_incident(
    drills, commander, post_webhook
):
    plan = plan_for(commander)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    execution.drill_run_inject(run_id=run.pk)
    incident = fire(post_webhook)
    execution.drill_run_check(run_id=run.pk)

    services.drill_stop(run_id=run.pk, actor=commander, reason="enough for today")
    run = execution.drill_run_finish(run_id=run.pk)

    assert run.status == DrillRunStatus.FINISHED
    assert run.outcome == "aborted"
    assert run.passed is None
    assert run.stop_reason == "stopped by cara: enough for today"
    assert active(drills) == []
    messages = list(incident.events.filter(kind=DRILL).values_list("message", flat=True))
    assert any("stopped by cara" in m for m in messages)
    assert any("Cleared ttft-spike" in m for m in messages)


def test_a_stop_that_lands_while_the_fault_is_being_injected_leaves_no_fault(
    drills, commander, monkeypatch
):
    """The injection runs with no transaction open (issue 23), so a stop can be recorded
    and finished while it is under way: the late injection is taken back out."""
    from drills.adapters import SimulatorAdapter

    plan = plan_for(commander)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    inject = SimulatorAdapter.inject

    def stop_meanwhile(self, **kw):
        services.drill_stop(run_id=run.pk, actor=commander, reason="wrong target")
        execution.drill_run_finish(run_id=run.pk)  # the finish task, before the answer
        return inject(self, **kw)

    monkeypatch.setattr(SimulatorAdapter, "inject", stop_meanwhile)
    execution.drill_run_inject(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == DrillRunStatus.FINISHED
    assert run.injected_at is None
    assert active(drills) == []
