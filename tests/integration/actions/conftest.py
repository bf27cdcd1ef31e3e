"""Actions end to end: the fleet simulator as its own process (`python -m simulator serve`,
real HTTP), a real Celery worker on Redis with KUBECONFIG pointing at it, PostgreSQL.

The test process itself also talks to the simulator: the request service previews each
action with the official client, exactly as the web process does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from kubernetes import client, config

from actions.models import ActionRun
from tests.helpers import free_port, wait_for

ROOT = Path(__file__).resolve().parents[3]
NS = "llm-serving"
LWS = ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
FAST = {
    "ACTIONS_RETRY_BACKOFF_SECONDS": "0.2",
    "ACTIONS_VERIFY_SECONDS": "30",
    "ACTIONS_K8S_TIMEOUT_SECONDS": "3",
}


class Sim:
    def __init__(self, url: str, kubeconfig: Path, proc: subprocess.Popen) -> None:
        self.url, self.kubeconfig, self.proc = url, kubeconfig, proc
        api_client = config.new_client_from_config(config_file=str(kubeconfig))
        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)  # noqa: S310
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=5) as r:  # noqa: S310 (local test server)
            return json.loads(r.read() or b"{}")

    def inject(self, slug: str) -> None:
        self._call("POST", f"/sim/inject/{slug}")

    def status(self) -> dict:
        return self._call("GET", "/sim/status")

    def fault(self, **rule) -> None:
        self._call("POST", "/sim/faults", rule)

    def history(self, resource: str, name: str) -> list[dict]:
        return self._call("GET", f"/sim/history?resource={resource}&name={name}")["changes"]

    def lws(self, name: str = "vllm-chat") -> dict:
        return self.custom.get_namespaced_custom_object(*LWS[:2], NS, LWS[2], name)

    def metrics(self) -> str:
        with urllib.request.urlopen(self.url + "/metrics", timeout=5) as r:  # noqa: S310
            return r.read().decode()


@pytest.fixture
def sim(tmp_path):
    port = free_port()
    kubeconfig = tmp_path / "kubeconfig"
    log = open(tmp_path / "simulator.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "simulator", "serve", "--port", str(port),
         "--kubeconfig", str(kubeconfig), "--startup-delay", "2", "--speed", "2"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def up():
        if proc.poll() is not None:
            log.seek(0)
            raise AssertionError(f"simulator exited:\n{log.read()[-3000:]}")
        with urllib.request.urlopen(url + "/sim/status", timeout=2):  # noqa: S310
            return kubeconfig.exists()

    wait_for(up, timeout=30, what="the simulator")
    yield Sim(url, kubeconfig, proc)
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


@pytest.fixture
def cluster(sim, settings):
    """Point this process's settings at the simulator (the request service previews)."""
    settings.KUBECONFIG = str(sim.kubeconfig)
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 3
    return sim


@pytest.fixture
def worker(cluster, start_worker):
    return start_worker({"KUBECONFIG": str(cluster.kubeconfig), **FAST})


def wait_run(run_id: int, *statuses: str, timeout: float = 60) -> ActionRun:
    def done():
        run = ActionRun.objects.get(pk=run_id)
        return run if run.status in statuses else None

    try:
        return wait_for(done, timeout=timeout, what=f"run #{run_id} to be {statuses}")
    except AssertionError:
        run = ActionRun.objects.get(pk=run_id)
        events = [e.message for e in run.events.all()]
        raise AssertionError(f"run #{run_id} is {run.status}: {run.error}\n{events}") from None


def eventually(check, *, timeout: float = 30, what: str):
    return wait_for(check, timeout=timeout, what=what, every=0.5)


def key(prefix: str = "it") -> str:
    return f"{prefix}-{time.monotonic_ns()}"
