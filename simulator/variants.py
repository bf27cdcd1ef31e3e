"""Other ways a runbook's alert fires: one variant per decision branch the main scenario
(scenarios.py) does not reach, so every branch of every runbook can be rehearsed.

`python -m simulator inject <slug> --variant <name>`; the branch each variant is meant to
reach is `Variant.branch`, and tests/reachability proves it through the real stack. Like the
main scenarios they change the world the way the real failure would: through the object
store with the actor a release would have, or by flipping a fault below the Kubernetes API.
Times are simulated seconds since the injection (`state["since"]`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator import objects
from simulator.fleet_cluster import BAD_CHECKPOINT
from simulator.scenarios import CHAT, SCENARIOS, Scenario
from simulator.store import LWS

if TYPE_CHECKING:
    from simulator.fleet import Fleet

# An evaluation job: many short prompts with mid-length answers (rps, prompt min..max,
# output, cache hit). The batch fills by request count (max_num_seqs), not by KV cache.
BATCH_FLOOD = (90.0, 50, 150, 400, 0.0)
THROTTLE = (10.0, 3.5)  # prefill (compute-bound) and decode (memory-bound) slow-down
NIGHT = 0.3  # share of the day's traffic at night
VERBOSE_OUTPUT = 2.0  # answers this many times longer, at the same request rate
TURNS_AT = 240.0  # when a failure that changes as it goes on takes its second turn
BURST_S = 20.0  # how long a transient ECC fault keeps reporting errors
UNIQUE_PREFIX_HIT = 0.05  # a timestamp at the start of the system prompt: no shared prefix
PROMPT_HISTOGRAM = "vllm:request_prompt_tokens"


def _nothing(fleet: Fleet, state: dict) -> None:
    return None


def _never(fleet: Fleet, state: dict) -> bool:
    return False  # no one-click fix: the runbook sends the responder to look


def _turned(fleet: Fleet, state: dict) -> bool:
    if state.get("turned") or fleet.t < state["since"] + TURNS_AT:
        return False
    state["turned"] = True
    return True


def _hang(fleet: Fleet, indices) -> list[int]:
    groups = fleet.groups(CHAT)
    hung = [i for i in indices if i in groups]
    for i in hung:
        groups[i].hung = True  # a stall without link errors: no NVLink CRC, no Xid 74
    return hung


def _unhang(fleet: Fleet, state: dict) -> None:
    for g in fleet.groups(CHAT).values():
        g.hung = g.out_of_rotation = False


def _none_hung(fleet: Fleet, state: dict) -> bool:
    return not any(g.hung or g.out_of_rotation for g in fleet.groups(CHAT).values())


# --- ttft-spike -------------------------------------------------------------------------
def _flood_start(fleet: Fleet, state: dict) -> None:
    fleet.extra_classes = [BATCH_FLOOD]


def _flood_stop(fleet: Fleet, state: dict) -> None:
    fleet.extra_classes = []


def _flood_fixed(fleet: Fleet, state: dict) -> bool:
    chat = fleet.pool_stats.get(CHAT, {})
    return chat.get("capacity_rps", 0) > chat.get("offered_rps", 0)


def _throttle_start(fleet: Fleet, state: dict) -> None:
    fleet.load_factor = NIGHT
    fleet.throttle[CHAT] = THROTTLE


def _throttle_stop(fleet: Fleet, state: dict) -> None:
    fleet.load_factor = 1.0
    fleet.throttle.pop(CHAT, None)


def _verbose_start(fleet: Fleet, state: dict) -> None:
    rps, lo, hi, out, hit = fleet.chat_class
    fleet.chat_class = (rps, lo, hi, out * VERBOSE_OUTPUT, hit)


def _chat_baseline(fleet: Fleet, state: dict) -> None:
    from simulator.fleet import CHAT as BASELINE

    fleet.chat_class = BASELINE


# --- nccl-hang --------------------------------------------------------------------------
def _pool_start(fleet: Fleet, state: dict) -> None:
    state["groups"] = _hang(fleet, sorted(fleet.groups(CHAT)))


def _stall_start(fleet: Fleet, state: dict) -> None:
    state["groups"] = _hang(fleet, (1,))


def _ejected_start(fleet: Fleet, state: dict) -> None:
    state["groups"] = _hang(fleet, (1,))


def _ejected_tick(fleet: Fleet, state: dict) -> None:
    """The kubelet's liveness probe restarts the stalled engine, but the router has ejected
    the endpoint after its timeouts and does not put it back: an idle group."""
    if not _turned(fleet, state):
        return
    for i in state["groups"]:
        g = fleet.groups(CHAT).get(i)
        if g is not None and g.hung:
            g.hung, g.out_of_rotation = False, True
            fleet.cluster.restart_container(g.leader.name, not_ready_s=20.0)


# --- prefix-cache-drop ------------------------------------------------------------------
def _timestamp_start(fleet: Fleet, state: dict) -> None:
    rps, lo, hi, out, _ = fleet.chat_class
    fleet.chat_class = (rps, lo, hi, out, UNIQUE_PREFIX_HIT)


def _timestamp_fixed(fleet: Fleet, state: dict) -> bool:
    return fleet.chat_class[4] is None


# --- long-context-kv --------------------------------------------------------------------
def _unmeasured_start(fleet: Fleet, state: dict) -> None:
    SCENARIOS["long-context-kv"].start(fleet, state)
    fleet.hidden_metrics.add(PROMPT_HISTOGRAM)


def _unmeasured_stop(fleet: Fleet, state: dict) -> None:
    SCENARIOS["long-context-kv"].stop(fleet, state)
    fleet.hidden_metrics.discard(PROMPT_HISTOGRAM)


# --- retry-storm ------------------------------------------------------------------------
def _jump_start(fleet: Fleet, state: dict) -> None:
    fleet.load_factor = 3.0  # a new integration triples traffic; it tags no retries


def _jump_stop(fleet: Fleet, state: dict) -> None:
    fleet.load_factor = 1.0


def _limited(fleet: Fleet, state: dict) -> bool:
    return fleet._num("rate_limit_rps", 0) > 0


def _backend_start(fleet: Fleet, state: dict) -> None:
    fleet.retries_without_budget = True
    state["groups"] = _hang(fleet, (2, 3))


def _backend_tick(fleet: Fleet, state: dict) -> None:
    """The clients' circuit breakers open and they back off; the backend stays broken."""
    if _turned(fleet, state):
        fleet.retries_without_budget = False


def _backend_stop(fleet: Fleet, state: dict) -> None:
    fleet.retries_without_budget = False
    _unhang(fleet, state)


# --- garbage-output ---------------------------------------------------------------------
def _leader_command(lws: dict) -> list[str]:
    tpl = lws["spec"]["leaderWorkerTemplate"]
    return (tpl.get("leaderTemplate") or tpl["workerTemplate"])["spec"]["containers"][0]["command"]


def _swap_model(fleet: Fleet, old: str, new: str, actor: str) -> bool:
    lws = fleet.store.get(LWS, objects.NAMESPACE, CHAT)
    command = _leader_command(lws)
    changed = [w.replace(f"--model {old} ", f"--model {new} ") for w in command]
    if changed == command:
        return False
    command[:] = changed
    fleet.store.update(LWS, objects.NAMESPACE, CHAT, lws, actor=actor)
    return True


def _checkpoint_start(fleet: Fleet, state: dict) -> None:
    # Rolled out to every group with no canary: one version serves, all of it bad.
    _swap_model(fleet, objects.MODEL, BAD_CHECKPOINT, "release-pipeline")


def _checkpoint_stop(fleet: Fleet, state: dict) -> None:
    _swap_model(fleet, BAD_CHECKPOINT, objects.MODEL, "scenario-clear")


def _checkpoint_fixed(fleet: Fleet, state: dict) -> bool:
    return not any(g.bad_weights for g in fleet.groups(CHAT).values())


# --- ecc-errors -------------------------------------------------------------------------
def _transient_start(fleet: Fleet, state: dict) -> None:
    leader = fleet.groups(CHAT)[min(fleet.groups(CHAT))].leader
    state["node"] = fleet.ecc_node = leader.node or "gpu-node-1"


def _transient_tick(fleet: Fleet, state: dict) -> None:
    if fleet.ecc_node and fleet.t >= state["since"] + BURST_S:
        fleet.ecc_node = None  # the errors stop; the count since the driver loaded stays


def _transient_stop(fleet: Fleet, state: dict) -> None:
    """The GPU is reset (driver reload): volatile ECC counts restart at 0, the last Xid
    stays in the driver's log as DCGM reports it."""
    fleet.ecc_node = None
    for key in [k for k in fleet.ecc_dbe if k[0] == state["node"]]:
        fleet.ecc_dbe[key] = 0.0


# --- cuda-graph-capture -----------------------------------------------------------------
def _node_start(fleet: Fleet, state: dict) -> None:
    groups = fleet.groups(CHAT)
    leader = groups[max(groups)].leader
    state["node"] = leader.node or "gpu-node-4"
    fleet.cluster.bad_nodes.add(state["node"])


def _node_stop(fleet: Fleet, state: dict) -> None:
    fleet.cluster.bad_nodes.discard(state["node"])


def _node_fixed(fleet: Fleet, state: dict) -> bool:
    return not any(p.node == state["node"] for g in fleet.groups(CHAT).values() for p in g.pods)


def _variant(slug: str, name: str, summary: str, fix: str, start, stop, fixed, tick=None):
    alert = SCENARIOS[slug].alert
    return Scenario(slug, alert, summary, fix, start, stop, fixed, tick)


# slug -> variant -> (the branch it reaches, the scenario)
VARIANTS: dict[str, dict[str, tuple[str, Scenario]]] = {
    "ttft-spike": {
        "batch-flood": ("queueing", _variant(
            "ttft-spike", "batch-flood",
            "an evaluation job sends 90 req/s of short prompts: the batch is full by request "
            "count (max_num_seqs) while the KV cache has room",
            "add groups", _flood_start, _flood_stop, _flood_fixed)),
        "gpu-throttle": ("slow_decode", _variant(
            "ttft-spike", "gpu-throttle",
            "at night (30 % of the day's traffic) the pool's GPUs throttle (cooling): "
            "prefill 8x and decoding 3.5x slower, no queue",
            "none in the console: fix the cooling, move the pool", _throttle_start,
            _throttle_stop, _never)),
        "verbose-answers": ("capacity_lost", _variant(
            "ttft-spike", "verbose-answers",
            "a client's prompt change makes answers twice as long at the same request rate: "
            "the pool saturates at normal traffic",
            "add groups", _verbose_start, _chat_baseline, _flood_fixed)),
    },
    "nccl-hang": {
        "pool-wide": ("pool_wide_stall", _variant(
            "nccl-hang", "pool-wide",
            "every vllm-chat group stalls at once with no link errors (a shared cause)",
            "restart the groups; look for the shared cause", _pool_start, _unhang,
            _none_hung)),
        "process-stall": ("hang", _variant(
            "nccl-hang", "process-stall",
            "group 1 stalls with no link errors (a process stall: scheduler loop or IPC)",
            "restart the group", _stall_start, _unhang, _none_hung)),
        "ejected": ("idle", _variant(
            "nccl-hang", "ejected",
            "group 1 stalls; after 4 minutes its engine is restarted by the liveness probe "
            "but the router keeps the endpoint ejected: an idle group",
            "restart the group (new pods rejoin the router)", _ejected_start, _unhang,
            _none_hung, _ejected_tick)),
    },
    "prefix-cache-drop": {
        "timestamped-prompts": ("hit_rate_low", _variant(
            "prefix-cache-drop", "timestamped-prompts",
            "a client puts a timestamp at the start of its system prompt: prefixes stop "
            "matching while the router stays cache-aware",
            "none in the console: the client moves the timestamp to the end",
            _timestamp_start, _chat_baseline, _timestamp_fixed)),
    },
    "long-context-kv": {
        "no-prompt-histogram": ("kv_pressure", _variant(
            "long-context-kv", "no-prompt-histogram",
            "the main scenario's long prompts, while a scrape config drops "
            f"{PROMPT_HISTOGRAM} (prompt lengths unknown)",
            "lower the long-context threshold or scale", _unmeasured_start,
            _unmeasured_stop, SCENARIOS["long-context-kv"].fixed)),
    },
    "retry-storm": {
        "traffic-jump": ("overload_errors", _variant(
            "retry-storm", "traffic-jump",
            "a new integration triples vllm-chat's traffic without tagging retries; 5xx follow",
            "set a gateway rate limit", _jump_start, _jump_stop, _limited)),
        "backend-down": ("backend_errors", _variant(
            "retry-storm", "backend-down",
            "two groups stall and clients retry without a budget; after 4 minutes the "
            "clients back off while the backend stays broken",
            "restart the stalled groups", _backend_start, _backend_stop, _none_hung,
            _backend_tick)),
    },
    "garbage-output": {
        "bad-checkpoint": ("bad_model", _variant(
            "garbage-output", "bad-checkpoint",
            f"a release rolls {BAD_CHECKPOINT} (broken FP8 calibration) to every group, "
            "no canary: HTTP 200 with malformed answers",
            "roll the LeaderWorkerSet back", _checkpoint_start, _checkpoint_stop,
            _checkpoint_fixed)),
    },
    "ecc-errors": {
        "transient": ("ecc_history", _variant(
            "ecc-errors", "transient",
            "group 0's GPU reports a burst of double-bit ECC errors for 20 s, then none; "
            "clearing it resets the GPU (volatile count to 0, the Xid stays)",
            "cordon the node", _transient_start, _transient_stop, _never, _transient_tick)),
    },
    "cuda-graph-capture": {
        "node-fault": ("pod_crashloop", _variant(
            "cuda-graph-capture", "node-fault",
            "the node under vllm-chat's last group fails CUDA initialisation (driver/library "
            "mismatch): its pod crash-loops, no release involved",
            "cordon the node and restart the group", _node_start, _node_stop, _node_fixed)),
    },
}  # fmt: skip


def scenario_for(slug: str, variant: str = "") -> Scenario:
    """The scenario to inject: the runbook's main one, or one of its variants."""
    if slug not in SCENARIOS:
        raise ValueError(f"unknown scenario {slug!r}; valid: {', '.join(SCENARIOS)}")
    if not variant:
        return SCENARIOS[slug]
    known = VARIANTS.get(slug, {})
    if variant not in known:
        valid = ", ".join(known) or "none"
        raise ValueError(f"unknown variant {variant!r} of {slug}; valid: {valid}")
    return known[variant][1]


def variant_names() -> dict[str, dict[str, str]]:
    """slug -> variant -> the decision branch it reaches (for status and docs)."""
    return {slug: {name: branch for name, (branch, _) in v.items()} for slug, v in VARIANTS.items()}
