"""A guarded change rolls itself back: the real simulator (its own process), a real
Prometheus scraping it every second, a real Celery worker on Redis and PostgreSQL.

A responder pushes a router config that switches the pool to round-robin (a one-click
rollback_router_config with explicit data), a commander approves it, the worker applies
it and starts the guard. The prefix-cache hit rate collapses, the guard sees it cross the
runbook's quality gate, and asks for the undo as its own user; the undo is risky, so it
waits for a commander like any other run. Once approved, the worker restores the router
config, and the incident's timeline names the signal, its threshold and its value.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from actions import services
from actions.guard.models import GuardWatch
from console import roles
from incidents.models import TimelineEvent
from tests.conftest import need_service
from tests.factories import AlertFactory, IncidentFactory
from tests.helpers import free_port, wait_for
from tests.integration.actions.conftest import FAST, NS, key, wait_run

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(400),
]
ROUTER_KEY = "dynamic_config.json"


@pytest.fixture
def prometheus(sim, tmp_path):
    binary = shutil.which("prometheus")
    need_service("prometheus", binary is not None, "apt-get install prometheus")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    target = sim.url.removeprefix("http://")
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"scrape_configs:\n  - job_name: sim\n    static_configs: [{{targets: ['{target}']}}]\n"
    )
    log = open(tmp_path / "prometheus.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def ready():
        if proc.poll() is not None:
            log.seek(0)
            raise AssertionError(f"prometheus exited:\n{log.read()[-3000:]}")
        with urllib.request.urlopen(url + "/-/ready", timeout=2) as r:  # noqa: S310
            return r.status == 200

    wait_for(ready, timeout=60, what="Prometheus to be ready")
    yield url
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


def prom_value(url: str, promql: str, *, ago: float = 0) -> float | None:
    query = urllib.parse.urlencode({"query": promql, "time": time.time() - ago})
    with urllib.request.urlopen(f"{url}/api/v1/query?{query}", timeout=5) as r:  # noqa: S310
        result = json.loads(r.read())["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def routing_logic(sim) -> str:
    cm = sim.core.read_namespaced_config_map("vllm-router-config", NS)
    return json.loads(cm.data[ROUTER_KEY])["routing_logic"]


def test_a_change_that_regresses_the_fleet_is_undone_by_its_guard(
    cluster, prometheus, start_worker, make_user, settings
):
    settings.PROMETHEUS_URL = prometheus
    start_worker(
        {
            "KUBECONFIG": str(cluster.kubeconfig),
            "PROMETHEUS_URL": prometheus,
            "TRIAGE_CACHE_SECONDS": "1",
            "GUARD_WINDOW_SECONDS": "240",
            "GUARD_INTERVAL_SECONDS": "3",
            "GUARD_SETTLE_SECONDS": "6",
            **FAST,
        }
    )
    rita, cara = make_user("rita", roles.RESPONDER), make_user("cara", roles.COMMANDER)
    incident = IncidentFactory(severity="SEV3", runbook="prefix-cache-drop", namespace=NS)
    labels = {"alertname": "VLLMPrefixCacheHitRateDrop", "namespace": NS, "lws": "vllm-chat"}
    AlertFactory(incident=incident, alertname=labels["alertname"], labels=labels)

    # The baseline the guard will compare with: a healthy, cache-aware pool.
    hit_rate = (
        f'sum(rate(vllm:prefix_cache_hits_total{{namespace="{NS}", lws="vllm-chat"}}[1m])) / '
        f'sum(rate(vllm:prefix_cache_queries_total{{namespace="{NS}", lws="vllm-chat"}}[1m]))'
    )
    # Healthy for a while already, so the moment before the change has data too.
    wait_for(
        lambda: (prom_value(prometheus, hit_rate, ago=10) or 0) > 0.7,
        timeout=90, every=1, what="a healthy hit rate in Prometheus",
    )  # fmt: skip
    assert routing_logic(cluster) == "prefixaware"

    # The change: a router config push to round-robin, through the console.
    cm = cluster.core.read_namespaced_config_map("vllm-router-config", NS)
    pushed = {**json.loads(cm.data[ROUTER_KEY]), "routing_logic": "roundrobin"}
    run, _created = services.action_run_request(
        incident_id=incident.pk,
        actor=rita,
        kind="rollback_router_config",
        params={"namespace": NS, "configmap": "vllm-router-config",
                "data": {**cm.data, ROUTER_KEY: json.dumps(pushed)}},
        idempotency_key=key("guard"),
        runbook="prefix-cache-drop",
    )  # fmt: skip
    services.action_run_approve(run_id=run.pk, actor=cara)
    wait_run(run.pk, "succeeded", timeout=90)
    assert routing_logic(cluster) == "roundrobin"
    watch = wait_for(
        lambda: GuardWatch.objects.filter(run=run).first(), timeout=10, what="the guard"
    )

    # The hit rate collapses; the guard breaches and asks for the undo (risky: approval).
    watch = wait_for(
        lambda: (lambda w: w if w.undo_run_id else None)(GuardWatch.objects.get(pk=watch.pk)),
        timeout=180, every=1, what="the guard to breach and request the undo",
    )  # fmt: skip
    assert watch.verdict == "breached", watch.verdict_reason
    undo = watch.undo_run
    assert undo.undo_of_id == run.pk
    assert undo.requested_by.get_username() == "console-guard"
    assert undo.status == "awaiting_approval"
    services.action_run_approve(run_id=undo.pk, actor=cara)
    wait_run(undo.pk, "succeeded", timeout=90)
    assert routing_logic(cluster) == "prefixaware"  # the object is restored

    messages = list(
        TimelineEvent.objects.filter(incident=incident)
        .order_by("occurred_at", "id")
        .values_list("message", flat=True)
    )
    (breach,) = [m for m in messages if "breached" in m]
    hit = next(s for s in watch.signals if s["id"] == "hit_rate")
    assert hit["state"] == "breach"
    assert hit["value"] < 0.3 < hit["baseline"]
    assert "Prefix-cache hit rate:" in breach
    assert "crossed the threshold (< 0.3)" in breach
    # A fleet-wide change: the trend after settling, checks in a row, not improving.
    assert "checks in a row after settling" in breach
    assert "not improving" in breach
    assert f"{hit['value']:.4g} ratio" in breach
    assert any(f"automatic undo requested as action #{undo.pk}" in m for m in messages)
    assert any(
        f"Action #{undo.pk} rollback_router_config" in m and "Succeeded" in m for m in messages
    )
