"""Each verifier against the real simulator over HTTP and a Prometheus stand-in: the
baseline pools give real evidence (some items pass, some fail), a change in the cluster
changes the verdict, and an unreachable source makes only its items unknown, saying why."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from readiness import selectors, services
from readiness.models import Deployment, ItemState
from tests.helpers import free_port
from tests.unit.conftest import NS

pytestmark = pytest.mark.django_db


def _refresh(worker_api) -> dict[str, dict]:
    """Run what the beat task runs; each deployment's items by key."""
    services.checklists_refresh(api_factory=worker_api)
    return {c.deployment.lws: {r.item.key: r for r in c.rows} for c in selectors.deployment_list()}


def test_baseline_simulator_pools_verified_with_evidence(sim, prom, worker_api):
    items = _refresh(worker_api)
    assert set(items) == {"vllm-chat", "vllm-long"}
    chat, long = items["vllm-chat"], items["vllm-long"]
    for key in (
        "drain", "readiness_probe", "nccl_watchdog", "oom_restart", "zone_spread",
        "router_fallback", "max_tokens_cap", "dcgm", "runbooks",
    ):  # fmt: skip
        assert chat[key].state == ItemState.VERIFIED, (key, chat[key].summary)
    assert "httpGet /health port 8080" in " ".join(chat["readiness_probe"].evidence)
    assert "topology.kubernetes.io/zone" in chat["zone_spread"].evidence[0]
    assert "TORCH_NCCL_ASYNC_ERROR_HANDLING=1" in chat["nccl_watchdog"].evidence[0]
    assert "max_tokens_cap=8192" in chat["max_tokens_cap"].evidence[0]
    assert 'count(DCGM_FI_DEV_GPU_UTIL{namespace="llm-serving",lws="vllm-chat"}) = 16' in (
        chat["dcgm"].evidence
    )
    assert "VLLMHighTTFT (vllm-incidents.yml) -> ttft-spike" in chat["runbooks"].evidence
    # The gateway ships without rate or concurrency limits: failing, naming what is missing.
    assert chat["gateway_limits"].state == ItemState.FAILING
    assert "requests per second, tokens, concurrency" in chat["gateway_limits"].summary
    # The long-context pool is not hardened: no zone spread, no preStop drain.
    assert long["zone_spread"].state == ItemState.FAILING
    assert long["drain"].state == ItemState.FAILING
    assert "lifecycle.preStop: absent" in " ".join(long["drain"].evidence)
    assert long["readiness_probe"].state == ItemState.VERIFIED
    # Person-checked items start unsigned, and a pool with failures is red.
    assert chat["oncall_trained"].state == ItemState.FAILING
    assert {c.rag for c in selectors.deployment_list()} == {"red"}


def test_a_change_in_the_cluster_changes_the_verdict(sim, prom, worker_api, admin_api):
    _refresh(worker_api)
    limits = {"rate_limit_rps": 50, "rate_limit_tokens_per_minute": 2_000_000,
              "max_concurrent_requests": 256}  # fmt: skip
    gateway = admin_api.get_configmap(NS, "llm-gateway-config")
    config = {**json.loads(gateway["data"]["config.json"]), **limits}
    admin_api.patch_configmap(
        NS, "llm-gateway-config",
        [{"op": "replace", "path": "/data/config.json", "value": json.dumps(config)}],
    )  # fmt: skip
    lws = admin_api.get_lws(NS, "vllm-chat")
    admin_api.patch_lws(
        NS, "vllm-chat",
        [{"op": "remove",
          "path": "/spec/leaderWorkerTemplate/leaderTemplate/spec/containers/0/readinessProbe"}],
    )  # fmt: skip
    assert lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0][
        "readinessProbe"
    ]
    chat = _refresh(worker_api)["vllm-chat"]
    assert chat["gateway_limits"].state == ItemState.VERIFIED
    assert "rate_limit_rps=50" in chat["gateway_limits"].evidence[0]
    assert chat["readiness_probe"].state == ItemState.FAILING
    assert "readinessProbe: absent" in chat["readiness_probe"].evidence[0]


def test_no_dcgm_series_for_the_pool_is_failing(sim, prom, worker_api):
    prom.answers = {"DCGM_FI_DEV_GPU_UTIL": 16, "DCGM_FI_DEV_XID_ERRORS": None}
    chat = _refresh(worker_api)["vllm-chat"]
    assert chat["dcgm"].state == ItemState.FAILING
    assert "no DCGM_FI_DEV_XID_ERRORS series for llm-serving/vllm-chat" in chat["dcgm"].summary


def test_unreachable_sources_make_only_their_items_unknown(sim, prom, worker_api, settings):
    _refresh(worker_api)  # found the deployments while the API answered
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    dead = sim.tmp_path / "dead-kubeconfig"
    from simulator.kubeconfig import write_kubeconfig

    write_kubeconfig(dead, server=f"http://127.0.0.1:{free_port()}", token="x")
    settings.KUBECONFIG = str(dead)
    chat = _refresh(worker_api)["vllm-chat"]
    assert chat["dcgm"].state == ItemState.UNKNOWN
    assert "Prometheus unreachable: Prometheus at http://127.0.0.1:" in chat["dcgm"].summary
    assert "refused the connection" in chat["dcgm"].summary
    for key in ("drain", "zone_spread", "router_fallback", "gateway_limits"):
        assert chat[key].state == ItemState.UNKNOWN, key
        assert "Kubernetes API unreachable" in chat[key].summary
        assert "could not be reached" in chat[key].summary
    assert chat["runbooks"].state == ItemState.VERIFIED  # the other sources still count
    # The API being down does not mark the deployments gone.
    assert Deployment.objects.filter(present=True).count() == 2
    assert {c.rag for c in selectors.deployment_list()} == {"red"}  # unsigned items


def test_an_alert_without_a_runbook_fails_that_item(sim, prom, worker_api, settings, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "extra.yml").write_text(
        "groups:\n- name: x\n  rules:\n"
        "  - alert: VLLMHighTTFT\n    expr: vector(1)\n"
        "  - alert: VLLMTokenizerOOM\n    expr: vector(1)\n"
    )
    settings.READINESS_RULES_DIR = str(rules)
    chat = _refresh(worker_api)["vllm-chat"]
    assert chat["runbooks"].state == ItemState.FAILING
    assert chat["runbooks"].summary == "No runbook answers VLLMTokenizerOOM."
    assert "VLLMTokenizerOOM (extra.yml) -> no runbook" in chat["runbooks"].evidence


def test_a_deleted_lws_is_kept_but_no_longer_listed(sim, prom, worker_api):
    _refresh(worker_api)
    from simulator.store import LWS

    with sim.sim.lock:
        sim.store.delete(LWS, NS, "vllm-long", actor="test")
    items = _refresh(worker_api)
    assert set(items) == {"vllm-chat"}
    gone = Deployment.objects.get(lws="vllm-long")
    assert not gone.present
    with pytest.raises(services.ReadinessError, match="no longer in the cluster"):
        services.verification_request(deployment_id=gone.pk, trigger="schedule", enqueue=False)


def _drill(make_user, *, lws: str, days_ago: int, passed: bool = True):
    from drills.models import DrillPlan, DrillRun, DrillRunStatus

    who = make_user(f"drill-{lws}-{days_ago}", "commander")
    ended = timezone.now() - timedelta(days=days_ago)
    plan = DrillPlan.objects.create(
        runbook="ttft-spike", title="Double the traffic", namespace=NS, lws=lws,
        fault="ttft-spike", created_by=who, created_at=ended,
    )  # fmt: skip
    return DrillRun.objects.create(
        plan=plan, runbook="ttft-spike", namespace=NS, lws=lws, status=DrillRunStatus.FINISHED,
        started_by=who, started_at=ended - timedelta(minutes=20), ended_at=ended, passed=passed,
    )  # fmt: skip


def test_a_drill_passed_in_the_last_90_days(sim, prom, worker_api, make_user):
    assert _refresh(worker_api)["vllm-chat"]["chaos_drill"].summary == (
        "No drill has passed against this deployment."
    )
    run = _drill(make_user, lws="vllm-chat", days_ago=10)
    _drill(make_user, lws="vllm-chat", days_ago=2, passed=False)  # a failed one does not count
    _drill(make_user, lws="vllm-long", days_ago=120)
    items = _refresh(worker_api)
    chat, long = items["vllm-chat"]["chaos_drill"], items["vllm-long"]["chaos_drill"]
    assert chat.state == ItemState.VERIFIED
    assert chat.summary == "A drill passed 10 days ago."
    assert chat.evidence[0].startswith(f"drill run #{run.pk} (ttft-spike, plan 'Double the")
    assert long.state == ItemState.FAILING
    assert long.summary == "The last passed drill is 120 days old (more than 90)."
