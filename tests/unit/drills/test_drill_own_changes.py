"""Issue 25, item 3: a drill's end restores only what its own fault changed, on the
timeline; an aborted drill is "aborted", not failed; a real SEV1 that opens or reopens
mid-drill stops it (the timeline's announcement at once, the watcher as the backstop).

Against the real fleet simulator over HTTP, incidents opened by Alertmanager-shaped
webhook bodies, PostgreSQL."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from actions.k8s import kube_api
from drills import execution, services
from drills.models import DrillRunStatus
from drills.timeline_kinds import DRILL
from incidents.models import Incident, IncidentStatus
from simulator.objects import NAMESPACE, ROUTER_CONFIGMAP
from simulator.store import CONFIGMAPS, LWS
from tests.payloads import BASE, alert, notification
from tests.unit.drills.test_drill_runs import active, fire, plan_for

pytestmark = pytest.mark.django_db
ROUTER_KEY = "dynamic_config.json"


@pytest.fixture
def drills(sim, settings):
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 5
    settings.DRILLS_SIMULATOR_URL = sim.url
    return sim


def replicas(sim) -> int:
    return sim.sim.store.get(LWS, NAMESPACE, "vllm-chat")["spec"]["replicas"]


def routing_logic(sim) -> str:
    cm = sim.sim.store.get(CONFIGMAPS, NAMESPACE, ROUTER_CONFIGMAP)
    return json.loads(cm["data"][ROUTER_KEY])["routing_logic"]


def drill_messages(incident: Incident) -> list[str]:
    return list(incident.events.filter(kind=DRILL).values_list("message", flat=True))


def fire_again(post_webhook, *, lws: str, key: str, alertname="VLLMHighTTFT", later_s=600):
    """A new firing (a later startsAt) of an alert group, as Alertmanager sends it."""
    body = notification(
        [alert(alertname=alertname, extra_labels={"lws": lws},
               starts_at=BASE + timedelta(seconds=later_s))],
        group_key=f'{{}}:{{alertname="VLLMHighTTFT", lws="{lws}", k="{key}"}}',
    )  # fmt: skip
    body["groupLabels"]["lws"] = lws
    response = post_webhook(body)
    assert response.status_code == 200, response.content
    return Incident.objects.get(pk=response.json()["incidents"][0])


def started(commander, post_webhook, fault="ttft-spike", **kw):
    plan = plan_for(commander, runbook=fault, fault=fault, **kw)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    execution.drill_run_inject(run_id=run.pk)
    incident = fire(post_webhook)
    run = execution.drill_run_check(run_id=run.pk)
    assert run.incident_id == incident.pk
    return run, incident


def test_a_drill_stop_keeps_the_scale_a_fix_made_during_it(drills, commander, post_webhook):
    """The bug: a real fix scaled vllm-chat 4 -> 6 during a drill, and the drill's stop
    reset the whole fleet to 4, outside the action audit."""
    run, incident = started(commander, post_webhook)
    assert run.fault_changes == [
        {"kind": "condition", "ref": "load_factor", "object": "fleet", "field": "load_factor",
         "before": 1.0, "after": 2.0},
    ]  # fmt: skip
    assert replicas(drills) == 4
    # The scale action's own write (the LWS /scale subresource, as the console's worker).
    kube_api().patch_scale(NAMESPACE, "vllm-chat", {"spec": {"replicas": 6}})

    services.drill_stop(run_id=run.pk, actor=commander, reason="done")
    run = execution.drill_run_finish(run_id=run.pk)

    assert replicas(drills) == 6
    assert active(drills) == []
    writers = {c.actor for c in drills.sim.store.changes(LWS, "vllm-chat")}
    assert "simulator-reset" not in writers
    assert [(r["field"], r["result"]) for r in run.restored] == [("load_factor", "cleared")]
    messages = drill_messages(incident)
    assert any("Cleared the fault's condition load_factor" in m for m in messages), messages
    assert any("the fleet is not reset" in m for m in messages), messages
    assert run.events.filter(kind="condition_cleared").count() == 1


def test_a_field_someone_changed_meanwhile_is_left_and_the_timeline_says_so(
    drills, commander, post_webhook
):
    run, incident = started(commander, post_webhook, fault="prefix-cache-drop")
    (change,) = run.fault_changes
    assert (change["field"], change["before"], change["after"]) == (
        f"{ROUTER_KEY}: routing_logic", "prefixaware", "roundrobin",
    )  # fmt: skip
    # A responder picks another cache-aware routing through the Kubernetes API.
    doc = json.loads(kube_api().get_configmap(NAMESPACE, ROUTER_CONFIGMAP)["data"][ROUTER_KEY])
    doc["routing_logic"] = "kvaware"
    kube_api().patch_configmap(
        NAMESPACE, ROUTER_CONFIGMAP,
        [{"op": "replace", "path": f"/data/{ROUTER_KEY}", "value": json.dumps(doc)}],
    )  # fmt: skip

    services.drill_stop(run_id=run.pk, actor=commander)
    run = execution.drill_run_finish(run_id=run.pk)

    assert routing_logic(drills) == "kvaware"
    (entry,) = run.restored
    assert entry["result"] == "left"
    assert entry["now"] == "kvaware"
    (writer,) = entry["changed_by"]
    assert writer.endswith(":console-worker")  # the worker's service account
    left = run.events.get(kind="left_alone").message
    assert "Left configmaps/llm-serving/vllm-router-config" in left
    assert f"changed by {writer}" in left
    assert any(m.endswith(left) for m in drill_messages(incident))


def test_a_field_nobody_touched_is_restored_and_the_timeline_says_so(
    drills, commander, post_webhook
):
    run, incident = started(commander, post_webhook, fault="prefix-cache-drop")
    assert routing_logic(drills) == "roundrobin"

    services.drill_stop(run_id=run.pk, actor=commander)
    run = execution.drill_run_finish(run_id=run.pk)

    assert routing_logic(drills) == "prefixaware"
    assert [r["result"] for r in run.restored] == ["restored"]
    assert any("Restored configmaps/llm-serving/vllm-router-config" in m
               for m in drill_messages(incident))  # fmt: skip


def test_a_stopped_drill_is_aborted_on_the_page_and_in_the_api(
    drills, commander, post_webhook, client
):
    run, _ = started(commander, post_webhook)
    services.drill_stop(run_id=run.pk, actor=commander, reason="pager went off")
    execution.drill_run_finish(run_id=run.pk)
    client.force_login(commander)

    body = client.get(f"/api/v1/drills/runs/{run.pk}/").json()
    assert body["outcome"] == "aborted"
    assert body["passed"] is None
    assert body["stop_reason"] == "stopped by cara: pager went off"
    assert body["scorecard"]["outcome"] == "aborted"
    assert body["restored"][0]["result"] == "cleared"
    assert client.get("/api/v1/drills/runs/").json()[0]["outcome"] == "aborted"
    page = client.get(f"/runbooks/drills/runs/{run.pk}/").content.decode()
    assert 'data-testid="drill-verdict">Aborted<' in page
    assert "pager went off" in page
    assert "FAILED" not in run.events.get(kind="scored").message


def test_a_real_sev1_opening_mid_drill_stops_it_at_once(
    drills, commander, post_webhook, django_capture_on_commit_callbacks
):
    run, _ = started(commander, post_webhook)
    with django_capture_on_commit_callbacks(execute=True):
        real = fire(post_webhook, lws="vllm-long", key="real")

    # Stopped by the timeline's announcement, before any watcher looked.
    run.refresh_from_db()
    assert run.status == DrillRunStatus.STOPPING
    assert run.stop_reason.startswith(f"automatic stop: a real SEV1 incident #{real.pk} opened")
    run = execution.drill_run_finish(run_id=run.pk)  # the finish task it queued
    assert run.outcome == "aborted"
    assert active(drills) == []
    real.refresh_from_db()
    assert not real.is_drill


def test_a_sev1_on_the_drills_own_target_is_its_effect_not_a_stop(
    drills, commander, post_webhook, django_capture_on_commit_callbacks
):
    """One fault opens several incidents on its target (issue 25, item 5): the second
    SEV1 there is the drill's doing, not a real one elsewhere."""
    run, _ = started(commander, post_webhook)
    with django_capture_on_commit_callbacks(execute=True):
        other = fire_again(post_webhook, lws="vllm-chat", key="storm", alertname="VLLMRetryStorm")
    assert other.pk != run.incident_id
    assert other.severity == "SEV1"
    run = execution.drill_run_check(run_id=run.pk)
    assert run.status == DrillRunStatus.RUNNING


def reopened_real_sev1(post_webhook) -> Incident:
    """A real SEV1 elsewhere, resolved just before the drill (within the reopen window)."""
    real = fire(post_webhook, lws="vllm-long", key="real")
    fire(post_webhook, lws="vllm-long", key="real", status="resolved")
    Incident.objects.filter(pk=real.pk).update(
        status=IncidentStatus.RESOLVED, resolved_at=timezone.now()
    )
    return real


@pytest.mark.parametrize("how", ["announcement", "watcher"])
def test_a_real_sev1_reopening_mid_drill_stops_it(
    drills, commander, post_webhook, django_capture_on_commit_callbacks, how
):
    real = reopened_real_sev1(post_webhook)
    run, _ = started(commander, post_webhook)

    with django_capture_on_commit_callbacks(execute=how == "announcement"):
        again = fire_again(post_webhook, lws="vllm-long", key="real")
    assert again.pk == real.pk
    again.refresh_from_db()
    assert again.status == IncidentStatus.TRIGGERED
    assert again.reopen_count == 1
    if how == "watcher":
        run.refresh_from_db()
        assert run.status == DrillRunStatus.RUNNING  # nobody announced it
        run = execution.drill_run_check(run_id=run.pk)
    else:
        run = execution.drill_run_finish(run_id=run.pk)

    assert run.status == DrillRunStatus.FINISHED
    assert run.outcome == "aborted"
    assert f"real SEV1 incident #{real.pk} reopened" in run.stop_reason
    assert active(drills) == []
