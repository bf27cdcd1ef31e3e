"""Decision-tree tables: given check states, the branch a responder is shown, and why."""

import pytest

from runbooks.catalog import load_catalog
from runbooks.decisions import check_state, evaluate


def st(**states):
    return states


def decide(slug, **states):
    rb = load_catalog().get(slug)
    return evaluate(rb, states)


TABLE = [
    # slug, states, branch, recommended actions
    (
        "ttft-spike",
        st(waiting_queue="firing", kv_usage="firing", preemptions="firing",
             traffic_vs_yesterday="firing", itl_degraded="ok"),
        "capacity",
        ("scale_lws", "update_gateway_limits"),
    ),
    (
        "ttft-spike",  # what the simulator gives: no data from yesterday
        st(waiting_queue="firing", kv_usage="firing", preemptions="firing",
             traffic_vs_yesterday="no_data"),
        "capacity_unconfirmed",
        ("scale_lws", "update_gateway_limits"),
    ),
    (
        "ttft-spike",
        st(waiting_queue="firing", kv_usage="firing", traffic_vs_yesterday="ok"),
        "capacity_lost",
        ("scale_lws",),
    ),
    ("ttft-spike", st(waiting_queue="firing", kv_usage="ok"), "queueing", ("scale_lws",)),
    ("ttft-spike", st(waiting_queue="ok", itl_degraded="firing"), "slow_decode", ()),
    (
        "nccl-hang",
        st(requests_running="firing", throughput_zero="firing", nvlink_crc_errors="no_data"),
        "hang",
        ("restart_lws_group", "cordon_node"),
    ),
    (
        "nccl-hang",
        st(requests_running="firing", throughput_zero="firing", nvlink_crc_errors="firing"),
        "hang_nvlink",
        ("restart_lws_group", "cordon_node"),
    ),
    (
        "nccl-hang",
        st(requests_running="firing", throughput_zero="firing", other_groups_serving="ok"),
        "pool_wide_stall",
        ("restart_lws_group",),
    ),
    ("nccl-hang", st(requests_running="ok", throughput_zero="firing"), "idle", ()),
    (
        "prefix-cache-drop",
        st(hit_rate_low="firing", cache_blind_routing="firing", routing_changed="no_data"),
        "routing",
        ("rollback_router_config",),
    ),
    (
        "prefix-cache-drop",
        st(hit_rate_low="firing", cache_blind_routing="ok", routing_changed="ok"),
        "hit_rate_low",
        ("rollback_router_config",),
    ),
    (
        "retry-storm",
        st(retry_ratio="firing", traffic_jump="firing", error_ratio="firing"),
        "retry_storm",
        ("update_gateway_limits",),
    ),
    ("retry-storm", st(error_ratio="firing", traffic_jump="ok"), "backend_errors", ()),
    (
        "garbage-output",
        st(canary_in_progress="firing", format_violations="firing", http_errors="ok"),
        "bad_canary",
        ("rollback_router_config",),
    ),
    ("garbage-output", st(canary_in_progress="ok", thumbs_down="firing"), "bad_model", ()),
    (
        "ecc-errors",
        st(ecc_new="firing", ecc_volatile="firing", workload_on_node="firing"),
        "bad_gpu_in_use",
        ("cordon_node", "restart_lws_group"),
    ),
    (
        "ecc-errors",
        st(ecc_new="firing", workload_on_node="ok"),
        "bad_gpu_vacated",
        ("cordon_node",),
    ),
    (
        "cuda-graph-capture",
        st(restarts="firing", crashloop_backoff="ok", pool_crashlooping="firing"),
        "release_crashloop",
        ("set_enforce_eager",),
    ),
    (
        "cuda-graph-capture",  # what a stalled rolling update looks like (the simulator)
        st(restarts="firing", crashloop_backoff="firing", pool_crashlooping="ok",
             rollout_in_progress="firing"),
        "release_crashloop",
        ("set_enforce_eager",),
    ),
    (
        "cuda-graph-capture",  # one pod, one revision: the node, not the release
        st(restarts="firing", crashloop_backoff="firing", pool_crashlooping="ok",
             rollout_in_progress="ok"),
        "pod_crashloop",
        (),
    ),
    (
        "cuda-graph-capture",  # revisions unknown: do not claim it is the release
        st(crashloop_backoff="firing", pool_crashlooping="ok", rollout_in_progress="no_data"),
        "pod_crashloop",
        (),
    ),
    (
        "cuda-graph-capture",
        st(restarts="ok", crashloop_backoff="ok", rollout_in_progress="firing"),
        "running",
        (),
    ),
    (
        "long-context-kv",
        st(kv_pressure="firing", long_prompts="firing", short_ttft_high="firing"),
        "long_prompts_in_shared_pool",
        ("update_gateway_limits",),
    ),
    ("long-context-kv", st(kv_pressure="firing", long_prompts="ok"), "load", ("scale_lws",)),
    (
        "long-context-kv",  # prompt lengths unknown: neither cause is claimed
        st(kv_pressure="firing", long_prompts="no_data"),
        "kv_pressure",
        ("update_gateway_limits", "scale_lws"),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("slug", "states", "branch", "actions"), TABLE)
def test_decision_table(slug, states, branch, actions):
    decision = decide(slug, **states)
    assert decision.branch.id == branch
    assert decision.branch.recommended_actions == actions


def test_the_decision_says_why():
    decision = decide(
        "nccl-hang", requests_running="firing", throughput_zero="firing", gpus_idle="ok"
    )
    assert decision.because == (("requests_running", "firing"), ("throughput_zero", "firing"))
    # `not` reports the check that was ok; `any` reports only the arms that held.
    decision = decide("ttft-spike", waiting_queue="firing", kv_usage="firing",
                      traffic_vs_yesterday="ok")  # fmt: skip
    assert ("traffic_vs_yesterday", "ok") in decision.because
    decision = decide("prefix-cache-drop", hit_rate_low="firing", cache_blind_routing="ok",
                      routing_changed="firing")  # fmt: skip
    assert decision.because == (("hit_rate_low", "firing"), ("routing_changed", "firing"))


@pytest.mark.parametrize("slug", [r.slug for r in load_catalog().all()])
@pytest.mark.parametrize("state", ["no_data", "error", None])
def test_missing_data_falls_through_to_the_catch_all(slug, state):
    rb = load_catalog().get(slug)
    states = {} if state is None else {c.id: state for c in rb.triage}
    decision = evaluate(rb, states)
    assert decision.branch is rb.decision_tree[-1]
    assert decision.is_catch_all
    assert decision.because == ()


def test_no_data_is_never_read_as_healthy_through_not():
    # capacity_lost needs traffic_vs_yesterday to be *ok*; unknown must not satisfy `not`.
    decision = decide("ttft-spike", waiting_queue="firing", kv_usage="firing",
                      traffic_vs_yesterday="error")  # fmt: skip
    assert decision.branch.id == "capacity_unconfirmed"


def test_unknown_state_is_rejected():
    with pytest.raises(ValueError, match="unknown state 'red'"):
        decide("ttft-spike", waiting_queue="red")


def test_check_state_compares_against_the_threshold():
    rb = load_catalog().get("nccl-hang")
    zero = rb.check("throughput_zero")  # == 0
    assert check_state(zero, 0.0) == "firing"
    assert check_state(zero, 12.5) == "ok"
    assert check_state(zero, None) == "no_data"
    assert check_state(zero, float("nan")) == "no_data"
    waiting = load_catalog().get("ttft-spike").check("waiting_queue")  # > 10
    assert [check_state(waiting, v) for v in (10, 10.5)] == ["ok", "firing"]
