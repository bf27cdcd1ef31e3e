"""Scaled out as deploy/k8s runs it: two gunicorn instances and two Celery workers
(separate processes) on one PostgreSQL database (this run's own) and one Redis (db 15,
this run's key prefix), one beat, and the fleet simulator over HTTPS.

- The same storm goes through both web instances, as two Alertmanager replicas in HA
  send every notification: one incident per group, no alert lost.
- The same action clicks go through both: one run, applied once in the cluster.
- Beat runs once: every periodic task it sends is executed by exactly one worker.
- The workers serve their metrics, which count the run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from actions.models import ActionRun
from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Alert, Incident
from tests.bench import storm
from tests.conftest import TOKEN
from tests.factories import IncidentFactory
from tests.helpers import free_port, wait_for
from tests.integration.actions.conftest import FAST, NS, sim  # noqa: F401 (fixture)
from tests.integration.conftest import KEY_PREFIX, REDIS_URL, database_url

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
THREADS, NOTIFICATIONS = 2, 25  # 50 bodies of 50 alerts, each sent to both instances
CLICKS = 4  # per instance, all with the same idempotency key
SCALE = {"namespace": NS, "lws": "vllm-chat", "replicas_delta": 2}


def console_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": REDIS_URL,
        "CELERY_BROKER_KEY_PREFIX": KEY_PREFIX,
        "SECRET_KEY": "integration-test",
        "ALERTMANAGER_TOKEN": TOKEN,
        "ALLOWED_HOSTS": "127.0.0.1",
        "VAR_DIR": str(tmp_path),
        **extra,
    }


@pytest.fixture
def processes(tmp_path):
    """Start processes with their logs in tmp_path; stop them all at the end."""
    started: list[tuple[subprocess.Popen, object]] = []

    def start(name: str, args: list[str], env: dict[str, str]) -> Path:
        log_path = tmp_path / f"{name}.log"
        log = open(log_path, "w+")  # noqa: SIM115
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        started.append((proc, log))
        return log_path

    yield start
    for proc, log in started:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def web(processes, tmp_path, start_worker):  # start_worker: PostgreSQL and Redis checks
    """Two gunicorn instances (two workers each, metrics in multiprocess mode)."""
    urls = []
    for n in range(2):
        port = free_port()
        metrics_dir = tmp_path / f"web-{n}-metrics"
        metrics_dir.mkdir()
        env = console_env(tmp_path, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
                          SECURE_SSL_REDIRECT="0", SECURE_COOKIES="0")  # fmt: skip
        processes(f"web-{n}", [str(BIN / "gunicorn"), "-c", "python:config.gunicorn_conf",
                               "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
                               "--workers", "2"], env)  # fmt: skip
        urls.append(f"http://127.0.0.1:{port}")
    for url in urls:
        wait_for(lambda url=url: requests.get(url + "/healthz", timeout=2).ok, timeout=60,
                 what=f"gunicorn at {url}")  # fmt: skip
    return urls


def post_both(urls: list[str], path: str, body: bytes, headers: dict) -> list[requests.Response]:
    """The same request to both instances at once."""
    barrier = threading.Barrier(len(urls))

    def send(url):
        barrier.wait()
        return requests.post(url + path, data=body, headers=headers, timeout=30)

    with ThreadPoolExecutor(len(urls)) as pool:
        return list(pool.map(send, urls))


def send_storm(urls: list[str], notes: list[storm.Notification]) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    for note in notes:  # one group's notifications stay in order, as Alertmanager sends
        for response in post_both(urls, "/api/v1/alerts/alertmanager", note.body, headers):
            assert response.status_code == 200, response.text


def scrape(url: str) -> str:
    return requests.get(url + "/metrics", timeout=5).text


def sample(text: str, name: str, **labels) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    pattern = (
        rf"^{re.escape(name)}(?:\{{{re.escape(want)}\}})? (\S+)$" if want else rf"^{name} (\S+)$"
    )
    return sum(float(m) for m in re.findall(pattern, text, re.MULTILINE))


def test_two_web_instances_two_workers_one_beat(
    sim,  # noqa: F811 (the fixture imported above)
    web,
    start_worker,
    processes,
    tmp_path,
    make_user,
):
    worker_env = {"KUBECONFIG": str(sim.kubeconfig), **FAST}
    metric_ports = []
    for n in range(2):
        metrics_dir = tmp_path / f"worker-{n}-metrics"
        metrics_dir.mkdir()
        metric_ports.append(free_port())
        start_worker({**worker_env, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
                      "WORKER_METRICS_PORT": str(metric_ports[-1])}, concurrency=2)  # fmt: skip
    beat_log = processes("beat", [str(BIN / "celery"), "-A", "config", "beat", "-l", "info",
                                  "--schedule", str(tmp_path / "beat-schedule")],
                         console_env(tmp_path))  # fmt: skip

    # --- the same storm through both web instances ----------------------------------
    notes = [storm.thread_storm(t, NOTIFICATIONS, seed=17) for t in range(THREADS)]
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(lambda thread_notes: send_storm(web, thread_notes), notes))
    sent = [note for thread_notes in notes for note in thread_notes]
    expected = storm.expected_state(sent)
    per_group = Counter(Incident.objects.values_list("grouping_key", flat=True))
    assert set(per_group) == set(expected)
    assert set(per_group.values()) == {1}, "a group opened two incidents"
    statuses = dict(Incident.objects.values_list("grouping_key", "status"))
    assert statuses == expected
    episodes = {
        (alert["fingerprint"], alert["startsAt"])
        for note in sent
        for alert in json.loads(note.body)["alerts"]
    }
    assert Alert.objects.count() == len(episodes), "an alert was lost or stored twice"
    received = sum(sample(scrape(url), "console_webhook_alerts_total", outcome="ingested")
                   for url in web)  # fmt: skip
    assert received == 2 * sum(len(json.loads(n.body)["alerts"]) for n in sent)

    # --- the same action clicks through both ----------------------------------------
    rita = make_user("rita", roles.RESPONDER)
    incident = IncidentFactory(severity="SEV3")
    before = sim.lws()["spec"]["replicas"]
    headers = {"Authorization": f"Token {ApiToken.objects.create(user=rita)[1]}",
               "Content-Type": "application/json"}  # fmt: skip
    click = json.dumps(
        {"kind": "scale_lws", "params": SCALE, "idempotency_key": "scale-out-click-1"}
    )
    path = f"/api/v1/incidents/{incident.pk}/actions/"
    answers = [r for _ in range(CLICKS) for r in post_both(web, path, click.encode(), headers)]
    assert sorted(r.status_code for r in answers).count(201) == 1, [r.text for r in answers]
    assert {r.json()["id"] for r in answers} == {ActionRun.objects.get().pk}
    run = wait_for(lambda: ActionRun.objects.filter(status="succeeded").first(), timeout=60,
                   what="the run to succeed")  # fmt: skip
    assert sim.lws()["spec"]["replicas"] == before + 2  # applied once, not twice
    history = sim.history("leaderworkersets", "vllm-chat")
    writes = [c for c in history if "console-worker" in c["actor"]]
    assert len(writes) == 1, writes
    ran = sum(sample(requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text,
                     "console_action_runs_total", kind="scale_lws", outcome="succeeded")
              for port in metric_ports)  # fmt: skip
    assert ran == 1
    assert run.pk == ActionRun.objects.get().pk

    # --- beat runs once: each periodic task it sent ran on exactly one worker ---------
    def sent_by_beat() -> int:
        return beat_log.read_text().count("Sending due task watch-drills")

    wait_for(lambda: sent_by_beat() >= 2, timeout=40, what="beat to send watch-drills twice")
    task = "drills.tasks.drill_runs_watch"

    def executed() -> list[str]:
        logs = " ".join(p.read_text() for p in tmp_path.glob("worker-*.log"))
        return re.findall(rf"Task {re.escape(task)}\[([0-9a-f-]+)\] succeeded", logs)

    wait_for(lambda: len(executed()) >= sent_by_beat(), timeout=20, what="the workers")
    ids = executed()
    assert len(ids) == len(set(ids)), "a periodic task ran twice"
    assert len(ids) == sent_by_beat()
