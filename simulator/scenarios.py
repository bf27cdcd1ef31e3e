"""The eight failure scenarios, one per runbook slug.

A scenario changes the world the way the real failure would: through the object store
with the actor a bad release or config push would have (so the change shows up in the
ConfigMap/LWS history, where the runbook tells responders to look), or, for faults below
the Kubernetes API (a hung collective, a bad GPU, clients retrying), by flipping that
fault in the fleet. `stop` undoes what `start` changed if nobody has fixed it already;
`fixed` says whether the runbook's fix is in place (shown by `status`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simulator import objects
from simulator.fleet_cluster import CRASHING_IMAGES, enforce_eager, leader_image
from simulator.store import LWS

if TYPE_CHECKING:
    from simulator.fleet import Fleet

CHAT = "vllm-chat"
BAD_IMAGE = sorted(CRASHING_IMAGES)[0]
ROUTER = (objects.ROUTER_CONFIGMAP, "dynamic_config.json")
GATEWAY = (objects.GATEWAY_CONFIGMAP, "config.json")
LONG_PROMPTS = (0.15, 50_000, 100_000, 600, 0.5)  # rps, prompt min..max, output, cache hit
BAD_THRESHOLD = 200_000


@dataclass(frozen=True)
class Scenario:
    slug: str
    alert: str
    summary: str
    fix: str
    start: Callable[[Fleet, dict], None]
    stop: Callable[[Fleet, dict], None]
    fixed: Callable[[Fleet, dict], bool]
    # Called every tick while active, for failures that change as they go on.
    tick: Callable[[Fleet, dict], None] | None = None


def _set(key: str, value):
    def change(doc: dict) -> None:
        doc[key] = value

    return change


# --- ttft-spike ------------------------------------------------------------------------
def _spike_start(fleet: Fleet, state: dict) -> None:
    fleet.load_factor = 2.0  # traffic doubles; the autoscaler is in cooldown


def _spike_stop(fleet: Fleet, state: dict) -> None:
    fleet.load_factor = 1.0


def _spike_fixed(fleet: Fleet, state: dict) -> bool:
    chat = fleet.pool_stats.get(CHAT, {})
    return chat.get("capacity_rps", 0) > chat.get("offered_rps", 0)


# --- nccl-hang -------------------------------------------------------------------------
def _hang_start(fleet: Fleet, state: dict) -> None:
    groups = fleet.groups(CHAT)
    index = 1 if 1 in groups else min(groups)
    groups[index].hung = groups[index].link_fault = True
    state["group"] = index


def _hang_stop(fleet: Fleet, state: dict) -> None:
    for g in fleet.groups(CHAT).values():
        g.hung = g.link_fault = False


def _hang_fixed(fleet: Fleet, state: dict) -> bool:
    return not any(g.hung for g in fleet.groups(CHAT).values())


# --- prefix-cache-drop -----------------------------------------------------------------
def _cache_start(fleet: Fleet, state: dict) -> None:
    state["before"] = fleet.config_doc(*ROUTER).get("routing_logic", "prefixaware")
    fleet.edit_config(*ROUTER, _set("routing_logic", "roundrobin"), actor="config-push")


def _cache_stop(fleet: Fleet, state: dict) -> None:
    if fleet.config_doc(*ROUTER).get("routing_logic") == "roundrobin":
        fleet.edit_config(*ROUTER, _set("routing_logic", state["before"]), actor="scenario-clear")


def _cache_fixed(fleet: Fleet, state: dict) -> bool:
    return fleet.router.get("routing_logic") in ("prefixaware", "kvaware", "session")


# --- retry-storm -----------------------------------------------------------------------
def _storm_start(fleet: Fleet, state: dict) -> None:
    leader = fleet.groups(CHAT)[min(fleet.groups(CHAT))].leader
    state["pod"] = leader.name
    fleet.cluster.restart_container(leader.name, not_ready_s=30.0)
    fleet.retries_without_budget = True


def _storm_stop(fleet: Fleet, state: dict) -> None:
    fleet.retries_without_budget = False
    fleet.retry_multiplier = 1.0  # clients calm down


def _storm_fixed(fleet: Fleet, state: dict) -> bool:
    return fleet.retry_multiplier < 1.2


# --- garbage-output --------------------------------------------------------------------
def _canary_start(fleet: Fleet, state: dict) -> None:
    state["before"] = fleet.config_doc(*ROUTER).get("model_versions", {"v1": 100, "v2-canary": 0})
    fleet.edit_config(
        *ROUTER, _set("model_versions", {"v1": 90, "v2-canary": 10}), actor="release-pipeline"
    )


def _canary_weight(fleet: Fleet) -> float:
    try:
        return float((fleet.config_doc(*ROUTER).get("model_versions") or {}).get("v2-canary", 0))
    except (TypeError, ValueError):
        return 0.0


def _canary_stop(fleet: Fleet, state: dict) -> None:
    if _canary_weight(fleet) > 0:
        fleet.edit_config(*ROUTER, _set("model_versions", state["before"]), actor="scenario-clear")


def _canary_fixed(fleet: Fleet, state: dict) -> bool:
    return _canary_weight(fleet) == 0


# --- ecc-errors ------------------------------------------------------------------------
def _ecc_start(fleet: Fleet, state: dict) -> None:
    groups = fleet.groups(CHAT)
    leader = groups[2 if 2 in groups else min(groups)].leader
    state["node"] = fleet.ecc_node = leader.node or "gpu-node-4"


def _ecc_stop(fleet: Fleet, state: dict) -> None:
    """The GPU is replaced: the node's new GPU has no ECC count and no Xid."""
    fleet.ecc_node = None
    for counts in (fleet.ecc_dbe, fleet.xid):
        for key in [k for k in counts if k[0] == state["node"]]:
            counts[key] = 0


def _ecc_fixed(fleet: Fleet, state: dict) -> bool:
    return not any(p.node == state["node"] for g in fleet.groups(CHAT).values() for p in g.pods)


# --- cuda-graph-capture ----------------------------------------------------------------
def _leader_container(lws: dict) -> dict:
    tpl = lws["spec"]["leaderWorkerTemplate"]
    containers = (tpl.get("leaderTemplate") or tpl["workerTemplate"])["spec"]["containers"]
    return next((c for c in containers if c.get("name") == "vllm"), containers[0])


def _set_image(fleet: Fleet, image: str, actor: str) -> None:
    lws = fleet.store.get(LWS, objects.NAMESPACE, CHAT)
    _leader_container(lws)["image"] = image
    fleet.store.update(LWS, objects.NAMESPACE, CHAT, lws, actor=actor)


def _graph_start(fleet: Fleet, state: dict) -> None:
    lws = fleet.store.get(LWS, objects.NAMESPACE, CHAT)
    state["image"] = leader_image(lws)
    _set_image(fleet, BAD_IMAGE, "release-pipeline")


def _graph_stop(fleet: Fleet, state: dict) -> None:
    lws = fleet.store.get(LWS, objects.NAMESPACE, CHAT)
    if leader_image(lws) == BAD_IMAGE and state["image"] != BAD_IMAGE:
        _set_image(fleet, state["image"], "scenario-clear")


def _graph_fixed(fleet: Fleet, state: dict) -> bool:
    lws = fleet.store.get(LWS, objects.NAMESPACE, CHAT)
    return leader_image(lws) not in CRASHING_IMAGES or enforce_eager(lws)


# --- long-context-kv -------------------------------------------------------------------
def _long_start(fleet: Fleet, state: dict) -> None:
    fleet.extra_classes = [LONG_PROMPTS]  # a new tenant sends 50k-100k-token documents
    state["before"] = fleet.config_doc(*GATEWAY).get("long_context_threshold_tokens", 32768)
    fleet.edit_config(
        *GATEWAY, _set("long_context_threshold_tokens", BAD_THRESHOLD), actor="config-push"
    )


def _long_stop(fleet: Fleet, state: dict) -> None:
    fleet.extra_classes = []
    if fleet.config_doc(*GATEWAY).get("long_context_threshold_tokens") == BAD_THRESHOLD:
        fleet.edit_config(
            *GATEWAY, _set("long_context_threshold_tokens", state["before"]), actor="scenario-clear"
        )


def _long_fixed(fleet: Fleet, state: dict) -> bool:
    return fleet.pool_stats.get(CHAT, {}).get("kv_usage_max", 0) < 0.95


SCENARIOS: dict[str, Scenario] = {
    s.slug: s
    for s in (
        Scenario(
            "ttft-spike",
            "VLLMHighTTFT",
            "traffic x2 on vllm-chat, autoscaler in cooldown",
            "scale vllm-chat up or lower the gateway max_tokens cap",
            _spike_start,
            _spike_stop,
            _spike_fixed,
        ),
        Scenario(
            "nccl-hang",
            "VLLMEngineStalled",
            "vllm-chat group 1 stuck in an NCCL collective",
            "restart the group (delete its leader pod)",
            _hang_start,
            _hang_stop,
            _hang_fixed,
        ),
        Scenario(
            "prefix-cache-drop",
            "VLLMPrefixCacheHitRateDrop",
            "config push set the router's routing_logic to roundrobin",
            "roll the router ConfigMap back to a cache-aware routing_logic",
            _cache_start,
            _cache_stop,
            _cache_fixed,
        ),
        Scenario(
            "retry-storm",
            "VLLMRetryStorm",
            "a vllm-chat pod restarted; clients retry without budget (x5 traffic, 5xx)",
            "set a gateway rate limit (rate_limit_rps > 0)",
            _storm_start,
            _storm_stop,
            _storm_fixed,
        ),
        Scenario(
            "garbage-output",
            "VLLMOutputQualityRegression",
            "canary v2 at 10 % produces malformed output with HTTP 200",
            "set the v2-canary weight back to 0",
            _canary_start,
            _canary_stop,
            _canary_fixed,
        ),
        Scenario(
            "ecc-errors",
            "GPUECCErrors",
            "the GPU under vllm-chat group 2's leader reports double-bit ECC errors",
            "cordon the node and restart the group",
            _ecc_start,
            _ecc_stop,
            _ecc_fixed,
        ),
        Scenario(
            "cuda-graph-capture",
            "VLLMCrashLooping",
            f"release {BAD_IMAGE} crashes in CUDA graph capture; the rollout crash-loops",
            "add --enforce-eager to the leader's vLLM command",
            _graph_start,
            _graph_stop,
            _graph_fixed,
        ),
        Scenario(
            "long-context-kv",
            "VLLMKVCachePressure",
            "50k-100k-token prompts reach vllm-chat (threshold raised to 200000)",
            "lower long_context_threshold_tokens to <= 32768, or scale vllm-chat",
            _long_start,
            _long_stop,
            _long_fixed,
        ),
    )
}
