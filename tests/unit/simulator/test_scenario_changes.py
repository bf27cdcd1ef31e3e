"""Each scenario records what it changed (`POST /sim/inject` answers it) and its clear takes
back only that: a field only where it still holds the fault's value, a condition below the
API and nothing else. What a responder changed meanwhile stays, and the clear's report
says who changed it (issue 25: a drill's end scaled a fixed pool back down)."""

import json

import pytest

from simulator.objects import NAMESPACE, ROUTER_CONFIGMAP
from simulator.scenarios import SCENARIOS
from simulator.server import Simulator
from simulator.store import CONFIGMAPS, LWS, NODES

CHAT = "vllm-chat"
ROUTER_KEY = "dynamic_config.json"


@pytest.fixture
def sim() -> Simulator:
    simulator = Simulator(seed=2, speed=1.0, startup_delay_s=0)
    tick(simulator, 20)
    return simulator


def tick(sim: Simulator, seconds: int) -> None:
    for _ in range(seconds):
        with sim.lock:
            sim.fleet.tick(1.0)


def control(sim: Simulator, method: str, *parts: str) -> dict:
    status, body = sim.control(method, list(parts))
    assert status == 200, body
    return body


def scale(sim: Simulator, replicas: int, actor: str = "console-worker") -> None:
    lws = sim.store.get(LWS, NAMESPACE, CHAT)
    lws["spec"]["replicas"] = replicas
    sim.store.update(LWS, NAMESPACE, CHAT, lws, actor=actor)


def routing_logic(sim: Simulator) -> str:
    return json.loads(sim.store.get(CONFIGMAPS, NAMESPACE, ROUTER_CONFIGMAP)["data"][ROUTER_KEY])[
        "routing_logic"
    ]


def set_routing_logic(sim: Simulator, value: str, actor: str) -> None:
    cm = sim.store.get(CONFIGMAPS, NAMESPACE, ROUTER_CONFIGMAP)
    doc = json.loads(cm["data"][ROUTER_KEY])
    doc["routing_logic"] = value
    cm["data"][ROUTER_KEY] = json.dumps(doc)
    sim.store.update(CONFIGMAPS, NAMESPACE, ROUTER_CONFIGMAP, cm, actor=actor)


@pytest.mark.parametrize("slug", sorted(SCENARIOS))
def test_inject_answers_what_it_changed_and_clear_takes_back_each(sim, slug):
    injected = control(sim, "POST", "inject", slug)
    assert injected["changes"], f"{slug} recorded no change"
    for change in injected["changes"]:
        assert {"kind", "object", "field"} <= set(change)
        if change["kind"] != "event":
            assert change["before"] != change["after"]
    tick(sim, 10)

    cleared = control(sim, "POST", "clear", slug)

    assert cleared["active"] is True
    report = cleared["report"]
    assert len(report) == len(injected["changes"])
    results = {(r["kind"], r["result"]) for r in report}
    assert results <= {("field", "restored"), ("condition", "cleared"), ("event", "not_undoable")}
    for entry in report:
        if entry["kind"] == "field":
            assert entry["now"] == entry["before"]
    assert sim.fleet.load_factor == 1.0
    assert sim.fleet.extra_classes == []
    assert sim.fleet.ecc_node is None
    assert not any(g.hung for g in sim.fleet.groups(CHAT).values())


def test_clearing_a_fault_that_is_not_active_reports_nothing_taken_back(sim):
    cleared = control(sim, "POST", "clear", "ttft-spike")
    assert cleared == {"cleared": "ttft-spike", "reports": {}, "active": False, "report": []}


def test_a_pool_scaled_during_the_fault_stays_scaled(sim):
    """ttft-spike is traffic (a condition): clearing it clears the traffic, not replicas."""
    control(sim, "POST", "inject", "ttft-spike")
    scale(sim, 6)
    tick(sim, 5)

    report = control(sim, "POST", "clear", "ttft-spike")["report"]

    assert sim.store.get(LWS, NAMESPACE, CHAT)["spec"]["replicas"] == 6
    assert [(r["field"], r["result"]) for r in report] == [("load_factor", "cleared")]
    assert sim.fleet.load_factor == 1.0


def test_a_field_someone_changed_since_is_left_and_the_report_names_them(sim):
    control(sim, "POST", "inject", "prefix-cache-drop")
    assert routing_logic(sim) == "roundrobin"
    set_routing_logic(sim, "kvaware", actor="console-worker")

    (entry,) = control(sim, "POST", "clear", "prefix-cache-drop")["report"]

    assert routing_logic(sim) == "kvaware"
    assert entry["result"] == "left"
    assert entry["now"] == "kvaware"
    assert entry["after"] == "roundrobin"
    assert entry["changed_by"] == ["console-worker"]


def test_a_cordon_made_during_the_ecc_fault_stays(sim):
    injected = control(sim, "POST", "inject", "ecc-errors")
    (node_change,) = injected["changes"]
    node = node_change["after"]
    obj = sim.store.get(NODES, None, node)
    obj.setdefault("spec", {})["unschedulable"] = True
    sim.store.update(NODES, None, node, obj, actor="console-worker")

    control(sim, "POST", "clear", "ecc-errors")

    assert sim.store.get(NODES, None, node)["spec"]["unschedulable"] is True
    assert sim.fleet.ecc_node is None


def test_the_image_is_restored_but_a_flag_added_since_stays(sim):
    """cuda-graph-capture: the fix adds --enforce-eager (another field); the clear puts
    the image back, which the fault changed, and keeps the flag, which it did not."""
    control(sim, "POST", "inject", "cuda-graph-capture")
    lws = sim.store.get(LWS, NAMESPACE, CHAT)
    tpl = lws["spec"]["leaderWorkerTemplate"]
    container = (tpl.get("leaderTemplate") or tpl["workerTemplate"])["spec"]["containers"][0]
    container.setdefault("args", []).append("--enforce-eager")
    sim.store.update(LWS, NAMESPACE, CHAT, lws, actor="console-worker")

    (entry,) = control(sim, "POST", "clear", "cuda-graph-capture")["report"]

    assert entry["result"] == "restored"
    lws = sim.store.get(LWS, NAMESPACE, CHAT)
    tpl = lws["spec"]["leaderWorkerTemplate"]
    container = (tpl.get("leaderTemplate") or tpl["workerTemplate"])["spec"]["containers"][0]
    assert "--enforce-eager" in container["args"]
