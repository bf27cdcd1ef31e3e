"""Each variant moves the fleet into the state its runbook branch describes (the branch
itself is proven through the real stack by tests/branches), and `clear` puts it back."""

import pytest

from simulator.fleet import CHAT as CHAT_CLASS
from simulator.fleet import Fleet
from simulator.objects import new_cluster
from simulator.server import Simulator
from simulator.variants import PROMPT_HISTOGRAM, VARIANTS, scenario_for
from tests.unit.simulator.test_fleet import CHAT, chat, make, run


def inject(variant: str, slug: str, seconds: int) -> Fleet:
    fleet = make()
    fleet.inject(slug, variant)
    run(fleet, seconds)
    return fleet


def test_unknown_variant_is_refused_naming_the_valid_ones():
    with pytest.raises(ValueError, match="valid: batch-flood, gpu-throttle"):
        scenario_for("ttft-spike", "nope")
    status, body = Simulator().control("POST", ["inject", "nccl-hang"], {"variant": ["x"]})
    assert status == 400
    assert "pool-wide" in body["error"]


def test_batch_flood_queues_with_room_in_the_kv_cache():
    pool = chat(inject("batch-flood", "ttft-spike", 60))
    assert pool["waiting"] > 10
    assert pool["kv_usage_max"] < 0.9
    assert pool["ttft_p99_s"] > 2


def test_gpu_throttle_slows_decoding_without_a_queue():
    pool = chat(inject("gpu-throttle", "ttft-spike", 60))
    assert pool["waiting"] == 0
    assert pool["itl_s"] > 0.1
    assert pool["ttft_p99_s"] > 2


def test_verbose_answers_saturate_at_normal_traffic():
    fleet = inject("verbose-answers", "ttft-spike", 60)
    pool = chat(fleet)
    assert pool["waiting"] > 10
    assert pool["kv_usage_max"] > 0.9
    assert fleet.load_factor == 1.0
    fleet.clear()
    assert fleet.chat_class == CHAT_CLASS


def test_pool_wide_stall_has_no_link_errors():
    fleet = inject("pool-wide", "nccl-hang", 30)
    assert all(g.hung for g in fleet.groups(CHAT).values())
    assert fleet.nvlink_crc == {}
    assert 74 not in fleet.xid.values()


def test_ejected_group_is_restarted_idle_and_out_of_rotation():
    fleet = inject("ejected", "nccl-hang", 30)
    assert fleet.groups(CHAT)[1].hung
    assert fleet.groups(CHAT)[1].engine.running > 0
    run(fleet, 240)
    g = fleet.groups(CHAT)[1]
    assert not g.hung
    assert g.out_of_rotation
    assert g.engine.running == 0
    assert g.leader.restarts == 1
    assert not fleet.status()["active_scenarios"][0]["fixed"]


def test_backend_down_clients_back_off_while_groups_stay_stalled():
    fleet = inject("backend-down", "retry-storm", 60)
    assert fleet.retry_multiplier > 4
    run(fleet, 240)
    assert fleet.retry_multiplier < 1.1
    assert chat(fleet)["hung_groups"] == [2, 3]


def test_bad_checkpoint_rolls_every_group_and_clear_rolls_back():
    fleet = inject("bad-checkpoint", "garbage-output", 120)
    assert all(g.bad_weights for g in fleet.groups(CHAT).values())
    before = dict(fleet.gw_violations)
    run(fleet, 30)
    answered = sum(n for (v, c), n in fleet.gw_requests.items() if v == "v1" and c == "200")
    assert fleet.gw_violations["v1"] - before["v1"] > 0.1 * 30 * 10  # ~25 % of ~13 rps
    assert answered > 0
    fleet.clear()
    run(fleet, 120)
    assert not any(g.bad_weights for g in fleet.groups(CHAT).values())


def test_node_fault_crash_loops_one_pod_without_a_rollout():
    fleet = inject("node-fault", "cuda-graph-capture", 90)
    looping = [p for _, p in fleet.cluster.all_pods() if p.restarts]
    assert len(looping) == 1
    assert looping[0].restarts >= 3
    assert len({g.revision for g in fleet.groups(CHAT).values()}) == 1


def test_transient_ecc_burst_stops_and_clear_resets_the_count_not_the_xid():
    fleet = inject("transient", "ecc-errors", 60)
    node = fleet.active["ecc-errors"]["node"]
    count = fleet.ecc_dbe[(node, 0)]
    run(fleet, 30)
    assert fleet.ecc_dbe[(node, 0)] == count > 0
    fleet.clear("ecc-errors")
    assert fleet.ecc_dbe[(node, 0)] == 0
    assert fleet.xid[(node, 0)] == 48


def test_replacing_the_gpu_leaves_no_evidence():
    fleet = make()
    fleet.inject("ecc-errors")
    run(fleet, 20)
    node = fleet.active["ecc-errors"]["node"]
    fleet.clear("ecc-errors")
    assert fleet.ecc_dbe[(node, 0)] == 0
    assert fleet.xid[(node, 0)] == 0


def test_timestamped_prompts_lose_prefix_hits_with_cache_aware_routing():
    fleet = inject("timestamped-prompts", "prefix-cache-drop", 30)
    assert fleet.router["routing_logic"] == "prefixaware"
    assert chat(fleet)["prefix_hit_rate"] < 0.3


def test_dropped_prompt_histogram_is_not_exported():
    from simulator.metrics import FleetCollector

    fleet = inject("no-prompt-histogram", "long-context-kv", 5)
    names = {m.name for m in FleetCollector(fleet).collect()}
    assert PROMPT_HISTOGRAM not in names
    assert "vllm:kv_cache_usage_perc" in names
    fleet.clear()
    assert PROMPT_HISTOGRAM in {m.name for m in FleetCollector(fleet).collect()}


def test_traffic_jump_triples_traffic_without_retries():
    fleet = inject("traffic-jump", "retry-storm", 30)
    assert fleet.load_factor == 3.0
    assert fleet.retry_multiplier == pytest.approx(1.0)


def test_every_variant_starts_and_clears_on_a_fresh_fleet():
    for slug, variants in VARIANTS.items():
        for name in variants:
            fleet = Fleet(new_cluster(), seed=2, startup_delay_s=5)
            run(fleet, 10)
            fleet.inject(slug, name)
            run(fleet, 5)
            assert fleet.status()["active_scenarios"][0]["variant"] == name
            fleet.clear()
            assert fleet.active == {}
