"""The exposition has the real exporters' names, types, labels and bucket sets
(as vLLM v1 exports them), and counters only go up."""

import math

from prometheus_client.parser import text_string_to_metric_families

from simulator import metrics
from simulator.fleet import Fleet
from simulator.fleet_engine import E2E_BUCKETS, ITL_BUCKETS, PROMPT_BUCKETS, TTFT_BUCKETS
from simulator.objects import new_cluster

ENGINE = {"namespace", "pod", "model_name", "engine", "lws"}
GPU = {"gpu", "UUID", "Hostname", "node"}
POD = {"namespace", "pod", "lws"}
GATEWAY = {"namespace", "lws"}
# family name as the parser reports it -> (type, labels every sample has)
EXPECTED = {
    "vllm:num_requests_running": ("gauge", ENGINE),
    "vllm:num_requests_waiting": ("gauge", ENGINE),
    "vllm:kv_cache_usage_perc": ("gauge", ENGINE),
    "vllm:num_preemptions": ("counter", ENGINE),
    "vllm:prompt_tokens": ("counter", ENGINE),
    "vllm:generation_tokens": ("counter", ENGINE),
    "vllm:prefix_cache_queries": ("counter", ENGINE),
    "vllm:prefix_cache_hits": ("counter", ENGINE),
    "vllm:request_success": ("counter", ENGINE | {"finished_reason"}),
    "vllm:time_to_first_token_seconds": ("histogram", ENGINE),
    "vllm:inter_token_latency_seconds": ("histogram", ENGINE),
    "vllm:e2e_request_latency_seconds": ("histogram", ENGINE),
    "vllm:request_prompt_tokens": ("histogram", ENGINE),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("counter", GPU),
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": ("counter", GPU),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", GPU),
    "DCGM_FI_DEV_FB_USED": ("gauge", GPU),
    "DCGM_FI_DEV_GPU_UTIL": ("gauge", GPU),
    "kube_pod_container_status_restarts": ("counter", POD | {"container"}),
    "kube_pod_status_ready": ("gauge", POD | {"condition"}),
    "kube_pod_container_status_waiting_reason": ("gauge", POD | {"container", "reason"}),
    "llm_gateway_requests": ("counter", GATEWAY | {"model_version", "code"}),
    "llm_gateway_rejected_requests": ("counter", GATEWAY | {"reason"}),
    "llm_gateway_client_retries": ("counter", GATEWAY),
    "llm_gateway_user_feedback": ("counter", GATEWAY | {"model_version", "feedback"}),
    "llm_gateway_output_format_violations": ("counter", GATEWAY | {"model_version"}),
    "vllm_router_routing_logic_info": ("gauge", {"namespace", "routing_logic"}),
    "kube_pod_labels": (
        "gauge",
        {
            "namespace",
            "pod",
            "label_leaderworkerset_sigs_k8s_io_name",
            "label_leaderworkerset_sigs_k8s_io_template_revision_hash",
        },
    ),
    "kube_pod_info": ("gauge", {"namespace", "pod", "node"}),
}


def fleet_after(seconds: int, *slugs: str) -> Fleet:
    fleet = Fleet(new_cluster(), seed=1, startup_delay_s=5)
    for slug in slugs:
        fleet.inject(slug)
    for _ in range(seconds):
        fleet.tick()
    return fleet


def families(fleet: Fleet) -> dict:
    return {f.name: f for f in text_string_to_metric_families(metrics.render(fleet).decode())}


def test_every_series_has_its_name_type_and_labels():
    fams = families(fleet_after(20))
    for name, (typ, labels) in EXPECTED.items():
        assert name in fams, name
        assert fams[name].type == typ, name
        assert fams[name].samples, name
        for sample in fams[name].samples:
            assert labels <= set(sample.labels), (name, sample.labels)
    running = fams["vllm:num_requests_running"].samples
    assert {s.labels["pod"] for s in running} == {
        "vllm-chat-0",
        "vllm-chat-1",
        "vllm-chat-2",
        "vllm-chat-3",
        "vllm-long-0",
        "vllm-long-1",
    }
    assert {s.labels["engine"] for s in running} == {"0"}
    assert {s.labels["namespace"] for s in running} == {"llm-serving"}


def test_counter_samples_use_the_total_suffix():
    text = metrics.render(fleet_after(5)).decode()
    for name in (
        "vllm:num_preemptions_total{",
        "vllm:generation_tokens_total{",
        "vllm:request_success_total{",
        "kube_pod_container_status_restarts_total{",
        "llm_gateway_requests_total{",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{",
    ):
        assert name in text
    assert "# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter" in text
    assert "_TOTAL_total" not in text
    assert "vllm:num_preemptions{" not in text


def test_histogram_buckets_are_the_real_sets():
    fams = families(fleet_after(10))
    for name, bounds in (
        ("vllm:time_to_first_token_seconds", TTFT_BUCKETS),
        ("vllm:inter_token_latency_seconds", ITL_BUCKETS),
        ("vllm:e2e_request_latency_seconds", E2E_BUCKETS),
        ("vllm:request_prompt_tokens", PROMPT_BUCKETS),
    ):
        pod0 = [s for s in fams[name].samples if s.labels["pod"] == "vllm-chat-0"]
        les = [float(s.labels["le"]) for s in pod0 if s.name.endswith("_bucket")]
        assert les == [*bounds, math.inf]
    assert TTFT_BUCKETS[0] == 0.001
    assert TTFT_BUCKETS[-1] == 2560.0
    assert len(TTFT_BUCKETS) == 22
    assert ITL_BUCKETS[0] == 0.01
    assert ITL_BUCKETS[-1] == 80.0
    assert len(ITL_BUCKETS) == 19
    assert PROMPT_BUCKETS[:4] == (1.0, 2.0, 5.0, 10.0)  # vLLM's 1-2-5 series
    assert PROMPT_BUCKETS[-1] == 100_000.0
    assert E2E_BUCKETS[0] == 0.3
    assert E2E_BUCKETS[-1] == 7680.0
    assert len(E2E_BUCKETS) == 21


def _cumulative_samples(fams: dict) -> dict:
    out = {}
    for fam in fams.values():
        if fam.type not in ("counter", "histogram"):
            continue
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_counters_never_decrease():
    fleet = fleet_after(5, "ttft-spike", "garbage-output", "ecc-errors", "nccl-hang")
    previous = _cumulative_samples(families(fleet))
    grew = set()
    for _ in range(8):
        for _ in range(5):
            fleet.tick()
        now = _cumulative_samples(families(fleet))
        for key, value in previous.items():
            assert now[key] >= value, key
            if now[key] > value:
                grew.add(key[0])
        previous = now
    for name in (
        "vllm:generation_tokens_total",
        "vllm:num_preemptions_total",
        "vllm:prefix_cache_hits_total",
        "llm_gateway_output_format_violations_total",
        "vllm:time_to_first_token_seconds_count",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL_total",
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL_total",
    ):
        assert name in grew, name


def test_ecc_series_follow_the_pod_on_the_bad_gpu():
    fleet = fleet_after(10, "ecc-errors")
    text = metrics.render(fleet).decode()
    bad = [
        line
        for line in text.splitlines()
        if line.startswith("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{") and not line.endswith(" 0")
    ]
    assert len(bad) == 1
    assert 'node="gpu-node-4"' in bad[0]
    assert 'pod="vllm-chat-2"' in bad[0]
    assert 'lws="vllm-chat"' in bad[0]
    assert 'gpu="0"' in bad[0]


def _nonzero(text: str, name: str) -> list[str]:
    return [
        line
        for line in text.splitlines()
        if line.startswith(name + "{") and float(line.rsplit(" ", 1)[1]) != 0
    ]


def test_nccl_hang_shows_nvlink_crc_errors_and_xid_74_on_the_hung_leaders_gpu():
    fleet = fleet_after(10, "nccl-hang")
    text = metrics.render(fleet).decode()
    crc = _nonzero(text, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL")
    xid = _nonzero(text, "DCGM_FI_DEV_XID_ERRORS")
    assert len(crc) == 1
    assert 'pod="vllm-chat-1"' in crc[0]
    assert 'gpu="0"' in crc[0]
    assert xid == [
        crc[0].replace("NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "XID_ERRORS").rsplit(" ", 1)[0]
        + " 74.0"
    ]


def test_ecc_errors_log_xid_48():
    fleet = fleet_after(10, "ecc-errors")
    xid = _nonzero(metrics.render(fleet).decode(), "DCGM_FI_DEV_XID_ERRORS")
    assert len(xid) == 1
    assert 'node="gpu-node-4"' in xid[0]
    assert xid[0].endswith(" 48.0")


def _long_prompt_share(fleet: Fleet) -> float:
    """The long-context-kv runbook's check: share of chat-pool prompts over 10k tokens."""
    fam = families(fleet)["vllm:request_prompt_tokens"]
    chat = [s for s in fam.samples if s.labels["lws"] == "vllm-chat"]
    count = sum(s.value for s in chat if s.name.endswith("_count"))
    short = sum(s.value for s in chat if s.name.endswith("_bucket") and s.labels["le"] == "10000.0")
    return 1 - short / count


def test_long_context_prompts_show_in_the_prompt_length_histogram():
    assert _long_prompt_share(fleet_after(120)) == 0  # long documents go to vllm-long
    assert _long_prompt_share(fleet_after(240, "long-context-kv")) > 0.01


def test_router_info_follows_the_configmap():
    fleet = fleet_after(3, "prefix-cache-drop")
    info = families(fleet)["vllm_router_routing_logic_info"].samples
    assert [(s.labels["routing_logic"], s.value) for s in info] == [("roundrobin", 1.0)]
    assert metrics.CONTENT_TYPE.startswith("text/plain")
