"""Each action kind end to end: requested through the service, approved where the policy
says so, run by a real Celery worker on Redis through the official client against the
simulator process; the simulated fleet changes and its metrics respond; undo restores."""

import json

import pytest

from actions import services
from actions.capture import config_revisions_capture
from actions.k8s import kube_api
from actions.models import ConfigRevision
from console import roles
from tests.factories import IncidentFactory
from tests.integration.actions.conftest import NS, eventually, key, wait_run

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
]


@pytest.fixture
def people(make_user):
    return make_user("rita", roles.RESPONDER), make_user("cara", roles.COMMANDER)


def run_it(people, incident, kind, params, *, expect="succeeded"):
    rita, cara = people
    run, _created = services.action_run_request(
        incident_id=incident.pk, actor=rita, kind=kind, params=params, idempotency_key=key()
    )
    if run.requires_approval:
        services.action_run_approve(run_id=run.pk, actor=cara)
    return wait_run(run.pk, expect, "failed" if expect != "failed" else "succeeded")


def gateway(sim) -> dict:
    cm = sim.core.read_namespaced_config_map("llm-gateway-config", NS)
    return json.loads(cm.data["config.json"])


def router(sim) -> dict:
    cm = sim.core.read_namespaced_config_map("vllm-router-config", NS)
    return json.loads(cm.data["dynamic_config.json"])


def test_scale_lws_adds_groups_the_fleet_serves_and_undo_removes_them(cluster, worker, people):
    incident = IncidentFactory(severity="SEV3")
    params = {"namespace": NS, "lws": "vllm-chat", "replicas_delta": 2}
    run = run_it(people, incident, "scale_lws", params)
    assert run.status == "succeeded", run.error
    assert run.before["state"]["replicas"] == 4
    assert run.after["state"]["replicas"] == 6
    assert cluster.lws()["spec"]["replicas"] == 6
    eventually(
        lambda: cluster.metrics().count("kube_pod_info{") >= 12,
        what="the new groups' pods in the simulator's metrics",
    )
    undo = services.action_run_undo(run_id=run.pk, actor=people[0], idempotency_key=key("undo"))
    undo = wait_run(undo.pk, "succeeded", "failed")
    assert undo.status == "succeeded", undo.error
    assert undo.undo_of_id == run.pk
    assert cluster.lws()["spec"]["replicas"] == 4
    kinds = list(incident.events.filter(kind="action").values_list("message", flat=True))
    assert any("Succeeded" in m for m in kinds)
    assert any("Undo requested" in m for m in kinds)


def test_enforce_eager_ends_the_crash_loop(cluster, worker, people):
    cluster.inject("cuda-graph-capture")
    eventually(lambda: "CrashLoopBackOff" in cluster.metrics(), what="the release to crash-loop")
    incident = IncidentFactory(severity="SEV1", runbook="cuda-graph-capture")
    params = {"namespace": NS, "lws": "vllm-chat", "enabled": True}
    run = run_it(people, incident, "set_enforce_eager", params)
    assert run.status == "succeeded", run.error
    assert run.requires_approval
    assert run.decided_by.username == "cara"
    containers = cluster.lws()["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
    assert "--enforce-eager" in json.dumps(containers)
    eventually(
        lambda: [s for s in cluster.status()["active_scenarios"] if s["fixed"]],
        timeout=60,
        what="the simulator to see the crash loop fixed",
    )


def test_router_rollback_restores_the_config_before_the_incident(cluster, worker, people):
    # The worker took a first look at start; a capture now finds nothing new.
    eventually(
        lambda: ConfigRevision.objects.filter(name="vllm-router-config").exists(),
        what="the worker's first look at the router ConfigMap",
    )
    assert config_revisions_capture(api=kube_api()) == 0
    cluster.inject("prefix-cache-drop")
    assert router(cluster)["routing_logic"] != "prefixaware"
    incident = IncidentFactory(severity="SEV3", runbook="prefix-cache-drop")
    params = {"namespace": NS, "configmap": "vllm-router-config", "revision": "before_incident"}
    run = run_it(people, incident, "rollback_router_config", params)
    assert run.status == "succeeded", run.error
    assert router(cluster)["routing_logic"] == "prefixaware"
    assert "routing_logic" in run.plan["diff"]


def test_restart_group_recreates_the_stuck_group(cluster, worker, people):
    before = cluster.core.read_namespaced_pod("vllm-chat-1", NS).metadata.uid
    incident = IncidentFactory(severity="SEV3", runbook="nccl-hang")
    params = {"namespace": NS, "lws": "vllm-chat", "pod": "vllm-chat-1-1"}
    run = run_it(people, incident, "restart_lws_group", params)
    assert run.status == "succeeded", run.error
    eventually(
        lambda: cluster.core.read_namespaced_pod("vllm-chat-1", NS).metadata.uid != before,
        what="LWS to recreate the group's leader",
    )
    with pytest.raises(Exception, match="cannot be undone"):
        services.action_run_undo(run_id=run.pk, actor=people[0], idempotency_key=key("undo"))


def test_cordon_node_and_undo(cluster, worker, people):
    incident = IncidentFactory(severity="SEV3", runbook="ecc-errors")
    run = run_it(people, incident, "cordon_node", {"node": "gpu-node-3", "reason": "ECC errors"})
    assert run.status == "succeeded", run.error
    node = cluster.core.read_node("gpu-node-3")
    assert node.spec.unschedulable
    assert any(t.key == "console.llm/cordoned" for t in node.spec.taints)
    undo = services.action_run_undo(run_id=run.pk, actor=people[0], idempotency_key=key("undo"))
    undo = run_it_existing(people, undo)
    assert undo.status == "succeeded", undo.error
    node = cluster.core.read_node("gpu-node-3")
    assert not node.spec.unschedulable
    assert not node.spec.taints


def run_it_existing(people, run):
    if run.requires_approval:
        services.action_run_approve(run_id=run.pk, actor=people[1])
    return wait_run(run.pk, "succeeded", "failed")


def test_gateway_limits_change_and_the_fleet_sees_them(cluster, worker, people):
    incident = IncidentFactory(severity="SEV3", runbook="retry-storm")
    params = {"namespace": NS, "rate_limit_rps": 60, "rate_limit_burst": 120}
    run = run_it(people, incident, "update_gateway_limits", params)
    assert run.status == "succeeded", run.error
    assert gateway(cluster)["rate_limit_rps"] == 60
    assert gateway(cluster)["max_tokens_cap"] == 8192  # untouched keys stay
    eventually(
        lambda: cluster.status()["gateway"].get("rate_limit_rps") == 60,
        what="the simulated gateway to load the new limit",
    )
