"""restart_lws_group and cordon_node against the simulator, whose fleet controllers
(LWS, scheduler) move only when the test ticks them."""

import pytest

from actions.kinds import (
    ActionError,
    Conflict,
    Context,
    GuardrailError,
    ParamError,
    TargetNotFound,
    kind_for,
)
from actions.kinds.cordon_node import TAINT_KEY, reason_slug
from simulator.store import NODES, PODS, NotFound
from tests.unit.conftest import NS

RESTART, CORDON = kind_for("restart_lws_group"), kind_for("cordon_node")
ECC_TAINT = {"key": "nvidia.com/gpu-ecc", "value": "dbe", "effect": "NoSchedule"}


def pod(sim, name) -> dict | None:
    try:
        return sim.store.get(PODS, NS, name)
    except NotFound:
        return None


def node(sim, name) -> dict:
    return sim.store.get(NODES, None, name)


def prepare(kind, api, params):
    params = kind.clean(params)
    current = kind.read(api, params)
    return params, current, kind.plan(current, params, Context())


# --- restart_lws_group --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"lws": "vllm-chat"}, "pod"),
        ({"lws": "vllm-chat", "pod": "vllm-chat-1", "group": 1}, "pod"),
        ({"lws": "vllm-chat", "group": -1}, "group"),
        ({"lws": "vllm-chat", "pod": "Vllm_Chat"}, "pod"),
    ],
)
def test_restart_clean_rejects(params, field):
    with pytest.raises(ParamError) as exc:
        RESTART.clean(params)
    assert exc.value.field == field


def test_restart_from_a_worker_pod_label(sim, api):
    old_uid = pod(sim, "vllm-chat-1")["metadata"]["uid"]
    params, current, plan = prepare(RESTART, api, {"lws": "vllm-chat", "pod": "vllm-chat-1-1"})
    assert RESTART.target(params) == f"leaderworkerset/{NS}/vllm-chat"
    assert current.identity == {"leader_pod": "vllm-chat-1", "uid": old_uid, "node": "gpu-node-2"}
    assert plan.summary.startswith("Restart group 1 (from pod vllm-chat-1-1) of llm-serving/")
    assert "cannot be undone" in plan.warnings
    assert plan.desired != current.state  # the lead's "nothing to do" check must not fire

    assert RESTART.dry_run(api, params, current, plan).english.startswith("server dry run accepted")
    assert pod(sim, "vllm-chat-1")["metadata"]["uid"] == old_uid

    after = RESTART.apply(api, params, current, plan)
    assert pod(sim, "vllm-chat-1") is None
    assert after.state["phase"] == "Absent"
    assert RESTART.already_applied(after, current, plan)
    ok, detail = RESTART.verify(api, params, plan)
    assert (ok, detail.english) == (
        True,
        "leader pod vllm-chat-1 deleted; LWS is recreating the group",
    )
    sim.tick()  # the LWS controller recreates the whole group
    new_uid = pod(sim, "vllm-chat-1")["metadata"]["uid"]
    assert new_uid != old_uid
    ok, detail = RESTART.verify(api, params, plan)
    assert ok
    assert new_uid in detail.english
    assert RESTART.already_applied(RESTART.read(api, params), current, plan)
    with pytest.raises(ActionError, match="cannot be undone"):
        RESTART.undo_params(params, current)
    assert (RESTART.undoable, RESTART.risky) == (False, True)


def test_restart_never_deletes_the_replacement(sim, api):
    """A stale plan (the leader was recreated meanwhile) is a 409, and the new pod lives."""
    params, current, plan = prepare(RESTART, api, {"lws": "vllm-chat", "group": 2})
    sim.store.delete(PODS, NS, "vllm-chat-2")
    sim.tick()
    replacement = pod(sim, "vllm-chat-2")["metadata"]["uid"]
    with pytest.raises(Conflict):
        RESTART.apply(api, params, current, plan)
    assert pod(sim, "vllm-chat-2")["metadata"]["uid"] == replacement
    assert RESTART.already_applied(RESTART.read(api, params), current, plan)


def test_restart_resolves_pods_that_are_gone_and_refuses_others(sim, api):
    sim.store.delete(PODS, NS, "vllm-chat-3-1")
    assert (
        RESTART.read(api, RESTART.clean({"lws": "vllm-chat", "pod": "vllm-chat-3-1"})).state[
            "group"
        ]
        == 3
    )
    with pytest.raises(ParamError, match="belongs to vllm-long") as exc:
        RESTART.read(api, RESTART.clean({"lws": "vllm-chat", "pod": "vllm-long-0"}))
    assert exc.value.field == "pod"
    with pytest.raises(TargetNotFound):
        RESTART.read(api, RESTART.clean({"lws": "vllm-chat", "pod": "router-abc"}))
    with pytest.raises(TargetNotFound, match="there is no group 9"):
        RESTART.read(api, RESTART.clean({"lws": "vllm-chat", "group": 9}))
    sim.store.delete(PODS, NS, "vllm-chat-0")  # being recreated right now
    with pytest.raises(GuardrailError, match="already recreating"):
        prepare(RESTART, api, {"lws": "vllm-chat", "group": 0})


# --- cordon_node --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"node": "gpu-node-3"}, "reason"),
        ({"node": "gpu-node-3", "reason": "x" * 201}, "reason"),
        ({"node": "gpu-node-3", "cordon": False, "restart_groups": True}, "restart_groups"),
        ({"node": "GPU node", "reason": "ecc"}, "node"),
        ({"node": "gpu-node-3", "reason": "ecc", "restart_groups": "sometimes"}, "restart_groups"),
    ],
)
def test_cordon_clean_rejects(params, field):
    with pytest.raises(ParamError) as exc:
        CORDON.clean(params)
    assert exc.value.field == field


def test_reason_slug():
    assert reason_slug("GPU ECC errors: double-bit (DBE) on GPU 3!") == (
        "gpu-ecc-errors-double-bit-dbe-on-gpu-3"
    )
    assert len(reason_slug("x" * 200)) == 63
    assert reason_slug("!!!") == "cordoned"


def test_cordon_and_restart_groups_then_undo(sim, api):
    sim.store.mutate(NODES, None, "gpu-node-3", lambda o: o["spec"].update(taints=[ECC_TAINT]))
    leader_uid = pod(sim, "vllm-chat-1")["metadata"]["uid"]
    params, current, plan = prepare(
        CORDON,
        api,
        {"node": "gpu-node-3", "reason": "ECC double-bit errors", "restart_groups": True},
    )
    assert CORDON.target(params) == "node/gpu-node-3"
    assert current.state == {
        "unschedulable": False,
        "taint": None,
        "lws_pods_on_node": ["vllm-chat-1-1"],
    }
    assert current.identity["leaders"] == [
        {"lws": "vllm-chat", "group": 1, "pod": "vllm-chat-1", "uid": leader_uid}
    ]
    taint = {"key": TAINT_KEY, "value": "ecc-double-bit-errors", "effect": "NoSchedule"}
    assert plan.desired == {"unschedulable": True, "taint": taint, "lws_pods_on_node": []}
    assert plan.summary == (
        "Cordon gpu-node-3 (ECC double-bit errors) and restart the LWS groups on it: vllm-chat/1"
    )
    assert "+unschedulable: true\n" in plan.diff
    before_node = node(sim, "gpu-node-3")

    assert "would delete vllm-chat-1" in CORDON.dry_run(api, params, current, plan).english
    assert node(sim, "gpu-node-3") == before_node
    assert pod(sim, "vllm-chat-1")["metadata"]["uid"] == leader_uid

    after = CORDON.apply(api, params, current, plan)
    assert after.resource_version != current.resource_version
    spec = node(sim, "gpu-node-3")["spec"]
    assert spec["unschedulable"] is True
    assert ECC_TAINT in spec["taints"]  # someone else's taint is kept
    assert taint in spec["taints"]
    assert pod(sim, "vllm-chat-1") is None
    assert CORDON.already_applied(after, current, plan)
    ok, detail = CORDON.verify(api, params, plan)
    assert (ok, detail.english) == (
        False,
        "LWS pods still on gpu-node-3 (their groups are restarting): ['vllm-chat-1-1']",
    )
    sim.tick()  # LWS recreates group 1; the scheduler avoids the cordoned node
    assert pod(sim, "vllm-chat-1-1")["spec"]["nodeName"] != "gpu-node-3"
    assert CORDON.verify(api, params, plan)[0] is True

    undo = CORDON.clean(CORDON.undo_params(params, current))
    assert undo == {"node": "gpu-node-3", "cordon": False, "keep_unschedulable": False}
    undo_current = CORDON.read(api, undo)
    undo_plan = CORDON.plan(undo_current, undo, Context())
    CORDON.apply(api, undo, undo_current, undo_plan)
    spec = node(sim, "gpu-node-3")["spec"]
    assert spec["unschedulable"] is False
    assert spec["taints"] == [ECC_TAINT]
    assert CORDON.verify(api, undo, undo_plan)[0] is True


def test_cordon_guardrail_counts_other_cordoned_gpu_nodes(sim, api, settings):
    for name in ("gpu-node-14", "gpu-node-15"):
        sim.store.mutate(NODES, None, name, lambda o: o["spec"].update(unschedulable=True))
    with pytest.raises(GuardrailError, match=r"2 GPU nodes are already cordoned"):
        prepare(CORDON, api, {"node": "gpu-node-3", "reason": "ecc"})
    settings.ACTIONS_MAX_CORDONED_NODES = 3
    _, _, plan = prepare(CORDON, api, {"node": "gpu-node-3", "reason": "ecc"})
    assert plan.desired["unschedulable"] is True
    # Undo of a cordon on a node someone else had cordoned leaves it unschedulable.
    params, current, plan = prepare(CORDON, api, {"node": "gpu-node-14", "reason": "ecc"})
    CORDON.apply(api, params, current, plan)
    undo = CORDON.clean(CORDON.undo_params(params, current))
    assert undo["keep_unschedulable"] is True
    now = CORDON.read(api, undo)
    CORDON.apply(api, undo, now, CORDON.plan(now, undo, Context()))
    spec = node(sim, "gpu-node-14")["spec"]
    assert spec["unschedulable"] is True
    assert all(t["key"] != TAINT_KEY for t in spec["taints"])


def test_cordon_stale_resource_version_is_a_conflict(sim, api):
    params, current, plan = prepare(CORDON, api, {"node": "gpu-node-5", "reason": "ecc"})
    sim.store.mutate(NODES, None, "gpu-node-5", lambda o: o["metadata"]["labels"].update(a="b"))
    with pytest.raises(Conflict):
        CORDON.apply(api, params, current, plan)
    assert node(sim, "gpu-node-5")["spec"]["unschedulable"] is False
    with pytest.raises(TargetNotFound):
        CORDON.read(api, CORDON.clean({"node": "gpu-node-99", "reason": "ecc"}))
