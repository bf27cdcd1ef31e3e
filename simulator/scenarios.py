"""The eight failure scenarios, one per runbook slug.

A scenario changes the world the way the real failure would: through the object store
with the actor a bad release or config push would have (so the change shows up in the
ConfigMap/LWS history, where the runbook tells responders to look), or, for faults below
the Kubernetes API (a hung collective, a bad GPU, clients retrying), by flipping that
fault in the fleet. `start` records each change it makes (simulator/scenario_changes.py);
`stop` takes back only those, field by field, and only where the field still holds the
fault's value (a fix made since stays, and the report says who made it); a condition
below the API is cleared and nothing else. `fixed` says whether the runbook's fix is in
place (shown by `status`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simulator import objects
from simulator.fleet_cluster import CRASHING_IMAGES, enforce_eager, leader_image
from simulator.scenario_changes import change_condition, change_field, record_event, revert
from simulator.store import LWS

if TYPE_CHECKING:
    from simulator.fleet import Fleet

CHAT = "vllm-chat"
BAD_IMAGE = sorted(CRASHING_IMAGES)[0]
ROUTER = (objects.ROUTER_CONFIGMAP, "dynamic_config.json")
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


def _undo(fleet: Fleet, state: dict) -> None:
    """Every scenario's stop: take back what its start recorded, and only that."""
    revert(fleet, state)


# --- ttft-spike ------------------------------------------------------------------------
def _spike_start(fleet: Fleet, state: dict) -> None:
    # Traffic doubles; the autoscaler is in cooldown.
    change_condition(state, "load_factor", fleet.load_factor, 2.0)
    fleet.load_factor = 2.0


def _spike_fixed(fleet: Fleet, state: dict) -> bool:
    chat = fleet.pool_stats.get(CHAT, {})
    return chat.get("capacity_rps", 0) > chat.get("offered_rps", 0)


# --- nccl-hang -------------------------------------------------------------------------
def _hang_start(fleet: Fleet, state: dict) -> None:
    groups = fleet.groups(CHAT)
    index = 1 if 1 in groups else min(groups)
    groups[index].hung = groups[index].link_fault = True
    state["group"] = index
    change_condition(state, "group_hung", False, True, group=index)


def _hang_fixed(fleet: Fleet, state: dict) -> bool:
    return not any(g.hung for g in fleet.groups(CHAT).values())


# --- prefix-cache-drop -----------------------------------------------------------------
def _cache_start(fleet: Fleet, state: dict) -> None:
    change_field(fleet, state, "router.routing_logic", "roundrobin", actor="config-push")


def _cache_fixed(fleet: Fleet, state: dict) -> bool:
    return fleet.router.get("routing_logic") in ("prefixaware", "kvaware", "session")


# --- retry-storm -----------------------------------------------------------------------
def _storm_start(fleet: Fleet, state: dict) -> None:
    leader = fleet.groups(CHAT)[min(fleet.groups(CHAT))].leader
    state["pod"] = leader.name
    fleet.cluster.restart_container(leader.name, not_ready_s=30.0)
    record_event(state, "container restart", f"pods/{objects.NAMESPACE}/{leader.name}")
    change_condition(state, "retries_without_budget", fleet.retries_without_budget, True)
    fleet.retries_without_budget = True


def _storm_fixed(fleet: Fleet, state: dict) -> bool:
    return fleet.retry_multiplier < 1.2


# --- garbage-output --------------------------------------------------------------------
def _canary_start(fleet: Fleet, state: dict) -> None:
    change_field(
        fleet, state, "router.model_versions", {"v1": 90, "v2-canary": 10},
        actor="release-pipeline",
    )  # fmt: skip


def _canary_weight(fleet: Fleet) -> float:
    try:
        return float((fleet.config_doc(*ROUTER).get("model_versions") or {}).get("v2-canary", 0))
    except (TypeError, ValueError):
        return 0.0


def _canary_fixed(fleet: Fleet, state: dict) -> bool:
    return _canary_weight(fleet) == 0


# --- ecc-errors ------------------------------------------------------------------------
def _ecc_start(fleet: Fleet, state: dict) -> None:
    groups = fleet.groups(CHAT)
    leader = groups[2 if 2 in groups else min(groups)].leader
    node = leader.node or "gpu-node-4"
    change_condition(state, "ecc_node", fleet.ecc_node, node)
    state["node"] = fleet.ecc_node = node


def _ecc_fixed(fleet: Fleet, state: dict) -> bool:
    return not any(p.node == state["node"] for g in fleet.groups(CHAT).values() for p in g.pods)


# --- cuda-graph-capture ----------------------------------------------------------------
def _graph_start(fleet: Fleet, state: dict) -> None:
    lws = fleet.store.get(LWS, objects.NAMESPACE, CHAT)
    state["image"] = leader_image(lws)
    change_field(fleet, state, "chat.leader_image", BAD_IMAGE, actor="release-pipeline")


def _graph_fixed(fleet: Fleet, state: dict) -> bool:
    lws = fleet.store.get(LWS, objects.NAMESPACE, CHAT)
    return leader_image(lws) not in CRASHING_IMAGES or enforce_eager(lws)


# --- long-context-kv -------------------------------------------------------------------
def _long_start(fleet: Fleet, state: dict) -> None:
    # A new tenant sends 50k-100k-token documents, and a config push lets them through.
    change_condition(state, "extra_traffic", None, "long prompts", added=[list(LONG_PROMPTS)])
    fleet.extra_classes = [*fleet.extra_classes, LONG_PROMPTS]
    change_field(
        fleet, state, "gateway.long_context_threshold_tokens", BAD_THRESHOLD,
        actor="config-push",
    )  # fmt: skip


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
            _undo,
            _spike_fixed,
        ),
        Scenario(
            "nccl-hang",
            "VLLMEngineStalled",
            "vllm-chat group 1 stuck in an NCCL collective",
            "restart the group (delete its leader pod)",
            _hang_start,
            _undo,
            _hang_fixed,
        ),
        Scenario(
            "prefix-cache-drop",
            "VLLMPrefixCacheHitRateDrop",
            "config push set the router's routing_logic to roundrobin",
            "roll the router ConfigMap back to a cache-aware routing_logic",
            _cache_start,
            _undo,
            _cache_fixed,
        ),
        Scenario(
            "retry-storm",
            "VLLMRetryStorm",
            "a vllm-chat pod restarted; clients retry without budget (x5 traffic, 5xx)",
            "set a gateway rate limit (rate_limit_rps > 0)",
            _storm_start,
            _undo,
            _storm_fixed,
        ),
        Scenario(
            "garbage-output",
            "VLLMOutputQualityRegression",
            "canary v2 at 10 % produces malformed output with HTTP 200",
            "set the v2-canary weight back to 0",
            _canary_start,
            _undo,
            _canary_fixed,
        ),
        Scenario(
            "ecc-errors",
            "GPUECCErrors",
            "the GPU under vllm-chat group 2's leader reports double-bit ECC errors",
            "cordon the node and restart the group",
            _ecc_start,
            _undo,
            _ecc_fixed,
        ),
        Scenario(
            "cuda-graph-capture",
            "VLLMCrashLooping",
            f"release {BAD_IMAGE} crashes in CUDA graph capture; the rollout crash-loops",
            "add --enforce-eager to the leader's vLLM command",
            _graph_start,
            _undo,
            _graph_fixed,
        ),
        Scenario(
            "long-context-kv",
            "VLLMKVCachePressure",
            "50k-100k-token prompts reach vllm-chat (threshold raised to 200000)",
            "lower long_context_threshold_tokens to <= 32768, or scale vllm-chat",
            _long_start,
            _undo,
            _long_fixed,
        ),
    )
}
