"""`python -m simulator reset` (POST /sim/reset): everything a drill or a demo changed goes
back to the baseline (replicas, templates and labels, ConfigMaps, cordons and taints,
counters, injected scenarios and API faults), through the store like any other writer,
so resourceVersions keep increasing and the history says who reset what."""

import json
import threading
import urllib.request
from http.server import ThreadingHTTPServer

import pytest

from simulator import objects
from simulator.__main__ import main as cli
from simulator.server import Simulator, _handler
from simulator.store import CONFIGMAPS, LWS, NODES, PODS

NS, CHAT = objects.NAMESPACE, "vllm-chat"


@pytest.fixture
def sim():
    """A simulator behind its real HTTP handler on a free port (no tick thread: the test
    moves time itself)."""
    simulator = Simulator(seed=3, speed=1.0, startup_delay_s=5)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(simulator))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    simulator.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield simulator
    httpd.shutdown()
    httpd.server_close()


def tick(sim: Simulator, seconds: int) -> None:
    for _ in range(seconds):
        with sim.lock:
            sim.fleet.tick(1.0)


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 (test, loopback)
        return json.loads(resp.read())


def metrics(sim: Simulator) -> str:
    with urllib.request.urlopen(sim.url + "/metrics", timeout=5) as resp:  # noqa: S310
        return resp.read().decode()


def sample_sum(text: str, name: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{")
    )


def mess_up(sim: Simulator) -> None:
    """What a morning of drills leaves behind."""
    store = sim.store
    lws = store.get(LWS, NS, CHAT)
    lws["spec"]["replicas"] = 6
    lws["metadata"]["labels"]["drill"] = "leftover"
    del lws["metadata"]["labels"]["app"]
    lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["command"][
        -1
    ] += " --enforce-eager"
    store.update(LWS, NS, CHAT, lws, actor="console-worker")
    node = store.get(NODES, None, "gpu-node-5")
    taint = {"key": "console.llm/cordoned", "effect": "NoSchedule"}
    node["spec"] = {"unschedulable": True, "taints": [taint]}
    store.update(NODES, None, "gpu-node-5", node, actor="console-worker")
    cm = store.get(CONFIGMAPS, NS, objects.GATEWAY_CONFIGMAP)
    cm["data"]["config.json"] = json.dumps({"max_tokens_cap": 2048, "rate_limit_rps": 60})
    store.update(CONFIGMAPS, NS, objects.GATEWAY_CONFIGMAP, cm, actor="console-worker")
    with sim.lock:
        for slug in ("ecc-errors", "retry-storm", "prefix-cache-drop", "nccl-hang"):
            sim.fleet.inject(slug)
    sim.faults.control(
        "POST", json.dumps({"action": "error", "path": "/pods", "times": 9}).encode()
    )
    tick(sim, 30)


def test_reset_over_http_and_the_cli_restores_the_baseline(sim, capsys):
    baseline = objects.new_cluster()
    mess_up(sim)
    before = metrics(sim)
    assert sample_sum(before, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL") > 0
    assert sample_sum(before, "DCGM_FI_DEV_XID_ERRORS") > 0
    rv_before = int(sim.store.resource_version())

    cli(["reset", "--url", sim.url])
    assert json.loads(capsys.readouterr().out)["reset"] is True

    status = get(sim.url + "/sim/status")
    assert status["active_scenarios"] == []
    assert status["gateway"]["retry_multiplier"] == 1.0
    for name in (CHAT, "vllm-long"):
        lws, want = sim.store.get(LWS, NS, name), baseline.get(LWS, NS, name)
        assert lws["spec"] == want["spec"], name
        assert lws["metadata"]["labels"] == want["metadata"]["labels"], name
    # The changed LWS is written back (resourceVersions go on, as a GitOps sync's would);
    # the untouched one is not written at all.
    assert int(sim.store.get(LWS, NS, CHAT)["metadata"]["resourceVersion"]) > rv_before
    assert int(sim.store.get(LWS, NS, "vllm-long")["metadata"]["resourceVersion"]) < rv_before
    for name in (objects.ROUTER_CONFIGMAP, objects.GATEWAY_CONFIGMAP):
        assert (
            sim.store.get(CONFIGMAPS, NS, name)["data"]
            == baseline.get(CONFIGMAPS, NS, name)["data"]
        )
    for node in sim.store.list(NODES):
        assert node["spec"] == {"unschedulable": False, "taints": []}, node["metadata"]["name"]
    assert any(c.actor == "simulator-reset" for c in sim.store.changes(CONFIGMAPS))
    assert get(sim.url + "/sim/faults")["rules"] == []
    # The baseline fleet serves at once: 4 + 2 groups ready, no pod left from the scale-out.
    pods = sorted(p["metadata"]["name"] for p in sim.store.list(PODS, NS))
    assert len(pods) == 12, pods
    assert "vllm-chat-4" not in pods
    tick(sim, 2)
    pools = get(sim.url + "/sim/status")["pools"]
    assert pools[CHAT]["groups_ready"] == 4
    assert pools["vllm-long"]["groups_ready"] == 2
    after = metrics(sim)
    assert sample_sum(after, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL") == 0
    assert sample_sum(after, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL") == 0
    assert sample_sum(after, "DCGM_FI_DEV_XID_ERRORS") == 0
    assert sample_sum(after, "kube_pod_container_status_restarts_total") == 0
    assert 'routing_logic="prefixaware"' in after
