"""Each scenario moves the symptoms its runbook names; its fix, applied through the object
store as the Kubernetes API would apply it, clears them; so does `clear()`."""

import json

import pytest

from simulator.fleet import CODES, Fleet
from simulator.objects import GATEWAY_CONFIGMAP, NAMESPACE, ROUTER_CONFIGMAP, new_cluster
from simulator.scenarios import SCENARIOS
from simulator.store import CONFIGMAPS, LWS, NODES, PODS

CHAT = "vllm-chat"


def make() -> Fleet:
    fleet = Fleet(new_cluster(), seed=1, startup_delay_s=5)
    run(fleet, 40)
    return fleet


def run(fleet: Fleet, seconds: int) -> None:
    for _ in range(seconds):
        fleet.tick(1.0)


def chat(fleet: Fleet) -> dict:
    return fleet.status()["pools"][CHAT]


def counter(fleet: Fleet, attr: str, pod: str | None = None) -> float:
    return sum(
        getattr(g.engine.counters, attr)
        for g in fleet.groups(CHAT).values()
        if pod is None or g.leader.name == pod
    )


def edit_json(fleet: Fleet, name: str, key: str, **changes) -> None:
    cm = fleet.store.get(CONFIGMAPS, NAMESPACE, name)
    doc = json.loads(cm["data"][key])
    doc.update(changes)
    cm["data"][key] = json.dumps(doc)
    fleet.store.update(CONFIGMAPS, NAMESPACE, name, cm, actor="console")


def edit_gateway(fleet: Fleet, **changes) -> None:
    edit_json(fleet, GATEWAY_CONFIGMAP, "config.json", **changes)


def scale(fleet: Fleet, replicas: int) -> None:
    lws = fleet.store.get(LWS, NAMESPACE, CHAT)
    lws["spec"]["replicas"] = replicas
    fleet.store.update(LWS, NAMESPACE, CHAT, lws, actor="console")


def test_initial_cluster_is_healthy_and_placed_one_pod_per_node():
    fleet = make()
    pods = fleet.store.list(PODS, NAMESPACE)
    assert len(pods) == 12
    assert all(p["status"]["phase"] == "Running" for p in pods)
    assert len({p["spec"]["nodeName"] for p in pods}) == 12
    assert fleet.store.get(LWS, NAMESPACE, CHAT)["status"]["readyReplicas"] == 4
    stats = chat(fleet)
    assert stats["waiting_max"] < 1
    assert stats["kv_usage_max"] < 0.8
    assert stats["prefix_hit_rate"] > 0.7


def test_unknown_slug_lists_the_valid_ones():
    fleet = make()
    with pytest.raises(ValueError, match="ttft-spike"):
        fleet.inject("no-such-thing")
    assert len(SCENARIOS) == 8


@pytest.mark.parametrize("fix", ["scale", "max_tokens_cap"])
def test_ttft_spike(fix):
    fleet = make()
    before = chat(fleet)
    fleet.inject("ttft-spike")
    run(fleet, 60)
    pre0 = counter(fleet, "preemptions")
    run(fleet, 20)
    during = chat(fleet)
    assert during["ttft_p99_s"] >= 5 * before["ttft_p99_s"]
    assert during["waiting_max"] > 10
    assert during["kv_usage_max"] > 0.9
    assert counter(fleet, "preemptions") > pre0
    assert during["itl_s"] <= 1.5 * before["itl_s"]
    if fix == "scale":
        scale(fleet, 6)
        run(fleet, 3)
        assert fleet.store.get(LWS, NAMESPACE, CHAT)["status"]["readyReplicas"] == 4
    else:
        edit_gateway(fleet, max_tokens_cap=512)
    run(fleet, 120)
    after = chat(fleet)
    assert after["waiting_max"] < 2
    assert after["kv_usage_max"] < 0.9
    assert after["ttft_p99_s"] < 2 * before["ttft_p99_s"]
    if fix == "scale":
        assert fleet.store.get(LWS, NAMESPACE, CHAT)["status"]["readyReplicas"] == 6
        assert len(fleet.store.list(PODS, NAMESPACE)) == 16


def test_nccl_hang_fixed_by_deleting_the_leader():
    fleet = make()
    fleet.inject("nccl-hang")
    run(fleet, 10)
    tokens = counter(fleet, "generation_tokens", "vllm-chat-1")
    run(fleet, 60)
    hung = fleet.groups(CHAT)[1].engine
    assert hung.running > 0
    assert counter(fleet, "generation_tokens", "vllm-chat-1") == tokens
    pod = fleet.store.get(PODS, NAMESPACE, "vllm-chat-1")
    assert pod["status"]["containerStatuses"][0]["ready"] is True  # health still OK
    assert chat(fleet)["hung_groups"] == [1]

    fleet.store.delete(PODS, NAMESPACE, "vllm-chat-1", actor="console")
    run(fleet, 1)
    assert fleet.store.get(PODS, NAMESPACE, "vllm-chat-1")["status"]["phase"] == "Running"
    assert fleet.store.get(PODS, NAMESPACE, "vllm-chat-1-1")["status"]["conditions"][1] == {
        "type": "Ready",
        "status": "False",
    }
    run(fleet, 20)
    assert chat(fleet)["hung_groups"] == []
    tokens = counter(fleet, "generation_tokens", "vllm-chat-1")
    run(fleet, 10)
    assert counter(fleet, "generation_tokens", "vllm-chat-1") > tokens


def test_prefix_cache_drop_is_in_history_and_rolled_back():
    fleet = make()
    base = chat(fleet)
    q0, h0 = counter(fleet, "prefix_queries"), counter(fleet, "prefix_hits")
    fleet.inject("prefix-cache-drop")
    push = [
        c for c in fleet.store.changes(CONFIGMAPS, ROUTER_CONFIGMAP) if c.actor == "config-push"
    ]
    assert len(push) == 1
    run(fleet, 60)
    q1, h1 = counter(fleet, "prefix_queries"), counter(fleet, "prefix_hits")
    assert (h1 - h0) / (q1 - q0) < 0.2
    during = chat(fleet)
    assert during["ttft_p50_s"] > 1.3 * base["ttft_p50_s"]
    assert during["gpu_util_max"] > 1.2 * base["gpu_util_max"]

    cm = fleet.store.get(CONFIGMAPS, NAMESPACE, ROUTER_CONFIGMAP)  # rollback from history
    cm["data"] = push[-1].before["data"]
    fleet.store.update(CONFIGMAPS, NAMESPACE, ROUTER_CONFIGMAP, cm, actor="console")
    run(fleet, 5)
    q2, h2 = counter(fleet, "prefix_queries"), counter(fleet, "prefix_hits")
    run(fleet, 30)
    assert (counter(fleet, "prefix_hits") - h2) / (counter(fleet, "prefix_queries") - q2) > 0.7
    assert fleet.status()["active_scenarios"][0]["fixed"] is True


def gw(fleet: Fleet, codes: tuple[str, ...]) -> float:
    return sum(n for (_, code), n in fleet.gw_requests.items() if code in codes)


def test_retry_storm_settles_with_a_rate_limit():
    fleet = make()
    retries0, answered0 = fleet.gw_retries, gw(fleet, CODES)
    fleet.inject("retry-storm")
    run(fleet, 1)
    pod = fleet.store.get(PODS, NAMESPACE, "vllm-chat-0")["status"]["containerStatuses"][0]
    assert pod["restartCount"] == 1
    assert pod["ready"] is False
    run(fleet, 60)
    assert fleet.status()["pools"][CHAT]["offered_rps"] > 4 * 13
    # Most answered requests are retries, and never more than all of them (the runbook's
    # retry ratio is retries / requests).
    share = (fleet.gw_retries - retries0) / (gw(fleet, CODES) - answered0)
    assert 0.6 < share <= 1
    errors = gw(fleet, ("502", "503", "504"))
    run(fleet, 10)
    assert gw(fleet, ("502", "503", "504")) > errors > 0

    edit_gateway(fleet, rate_limit_rps=20)
    run(fleet, 30)
    assert fleet.gw_rejected["rate_limit"] > 0
    run(fleet, 60)
    errors = gw(fleet, ("502", "503", "504"))
    rejected, retries = fleet.gw_rejected["rate_limit"], fleet.gw_retries
    run(fleet, 30)
    assert gw(fleet, ("502", "503", "504")) == errors
    assert fleet.gw_rejected["rate_limit"] - rejected < 1
    assert fleet.gw_retries - retries < 0.05 * 30 * 13
    assert chat(fleet)["waiting_max"] < 2


def test_garbage_output_from_the_canary_with_http_200():
    fleet = make()
    fleet.inject("garbage-output")
    run(fleet, 60)
    assert fleet.gw_requests[("v2-canary", "200")] > 50
    assert sum(fleet.gw_requests[("v2-canary", c)] for c in ("502", "503", "504")) == 0
    per_request = {
        v: fleet.gw_violations[v] / fleet.gw_requests[(v, "200")] for v in ("v1", "v2-canary")
    }
    assert per_request["v2-canary"] > 0.1 > 10 * per_request["v1"]
    down = {
        v: fleet.gw_feedback[(v, "thumbs_down")] / fleet.gw_feedback[(v, "thumbs_up")]
        for v in ("v1", "v2-canary")
    }
    assert down["v2-canary"] > 5 * down["v1"]
    edit_json(
        fleet, ROUTER_CONFIGMAP, "dynamic_config.json", model_versions={"v1": 100, "v2-canary": 0}
    )
    run(fleet, 1)
    violations = fleet.gw_violations["v2-canary"]
    run(fleet, 30)
    assert fleet.gw_violations["v2-canary"] == violations


def ecc_on(fleet: Fleet, node: str) -> float:
    return fleet.ecc_dbe.get((node, 0), 0.0)


def test_ecc_errors_cordon_and_restart_move_the_group():
    fleet = make()
    fleet.inject("ecc-errors")
    bad = fleet.store.get(PODS, NAMESPACE, "vllm-chat-2")["spec"]["nodeName"]
    run(fleet, 30)
    assert ecc_on(fleet, bad) > 5
    assert fleet.wrong_answers > 0

    node = fleet.store.get(NODES, None, bad)
    node["spec"]["unschedulable"] = True
    node["spec"]["taints"] = [{"key": "nvidia.com/gpu-ecc", "effect": "NoSchedule"}]
    fleet.store.update(NODES, None, bad, node, actor="console")
    fleet.store.delete(PODS, NAMESPACE, "vllm-chat-2", actor="console")
    run(fleet, 10)
    nodes = {p["spec"].get("nodeName") for p in fleet.store.list(PODS, NAMESPACE)}
    assert bad not in nodes
    assert fleet.store.get(LWS, NAMESPACE, CHAT)["status"]["readyReplicas"] == 4
    assert fleet.status()["active_scenarios"][0]["fixed"] is True
    wrong = fleet.wrong_answers
    run(fleet, 10)
    assert fleet.wrong_answers == wrong


def test_noexecute_taint_evicts_and_the_group_moves():
    fleet = make()
    node = fleet.store.get(NODES, None, "gpu-node-4")
    node["spec"]["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]
    fleet.store.update(NODES, None, "gpu-node-4", node, actor="console")
    run(fleet, 10)
    assert "gpu-node-4" not in {p["spec"].get("nodeName") for p in fleet.store.list(PODS)}
    assert fleet.store.get(LWS, NAMESPACE, CHAT)["status"]["readyReplicas"] == 4


def restarts(fleet: Fleet) -> int:
    return sum(
        p["status"]["containerStatuses"][0]["restartCount"]
        for p in fleet.store.list(PODS, NAMESPACE)
    )


def test_cuda_graph_capture_crash_loop_ends_with_enforce_eager():
    fleet = make()
    fleet.inject("cuda-graph-capture")
    assert fleet.store.changes(LWS, CHAT)[-1].actor == "release-pipeline"
    backoff_seen = 0
    for _ in range(90):
        run(fleet, 1)
        backoff_seen += any(
            p["status"]["containerStatuses"][0]["state"].get("waiting", {}).get("reason")
            == "CrashLoopBackOff"
            for p in fleet.store.list(PODS, NAMESPACE)
        )
    assert restarts(fleet) >= 3
    assert backoff_seen > 45  # mostly waiting in CrashLoopBackOff
    assert fleet.store.get(LWS, NAMESPACE, CHAT)["status"]["readyReplicas"] == 3

    lws = fleet.store.get(LWS, NAMESPACE, CHAT)
    command = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    command["command"][-1] += " --enforce-eager"
    fleet.store.update(LWS, NAMESPACE, CHAT, lws, actor="console")
    run(fleet, 60)
    status = fleet.store.get(LWS, NAMESPACE, CHAT)["status"]
    assert status["readyReplicas"] == 4
    assert status["updatedReplicas"] == 4
    assert chat(fleet)["crashlooping_groups"] == []
    assert all(g.eager for g in fleet.groups(CHAT).values())
    count = restarts(fleet)
    run(fleet, 30)
    assert restarts(fleet) == count


@pytest.mark.parametrize("fix", ["threshold", "scale"])
def test_long_context_kv(fix):
    fleet = make()
    before = chat(fleet)
    fleet.inject("long-context-kv")
    run(fleet, 60)
    pre0 = counter(fleet, "preemptions")
    run(fleet, 20)
    during = chat(fleet)
    assert during["kv_usage_max"] > 0.95
    assert counter(fleet, "preemptions") > pre0
    assert during["ttft_p99_s"] >= 5 * before["ttft_p99_s"]
    if fix == "threshold":
        edit_gateway(fleet, long_context_threshold_tokens=32768)
    else:
        scale(fleet, 6)
    run(fleet, 120)
    after = chat(fleet)
    assert after["kv_usage_max"] < 0.9
    assert after["waiting_max"] < 2


@pytest.mark.parametrize("slug", sorted(SCENARIOS))
def test_clear_recovers(slug):
    fleet = make()
    fleet.inject(slug)
    run(fleet, 60)
    fleet.clear()
    assert fleet.status()["active_scenarios"] == []
    run(fleet, 120)
    stats = chat(fleet)
    assert stats["waiting_max"] < 2
    assert stats["kv_usage_max"] < 0.9
    assert stats["hung_groups"] == []
    assert stats["crashlooping_groups"] == []
    assert stats["prefix_hit_rate"] > 0.7
    assert fleet.store.get(LWS, NAMESPACE, CHAT)["status"]["readyReplicas"] == 4
    assert fleet.router["model_versions"].get("v2-canary", 0) == 0
    assert fleet.gateway["long_context_threshold_tokens"] == 32768
    assert fleet.retry_multiplier < 1.1
    ecc = dict(fleet.ecc_dbe)
    run(fleet, 5)
    assert fleet.ecc_dbe == ecc


def test_deterministic_for_a_seed():
    a, b = make(), make()
    for f in (a, b):
        f.inject("ttft-spike")
        run(f, 30)
    assert a.status() == b.status()
