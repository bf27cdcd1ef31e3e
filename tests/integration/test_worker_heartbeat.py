"""A real worker proves it is alive: its heartbeat appears, goes stale while the worker
is frozen (SIGSTOP: nothing in it runs, which is what a wedged worker looks like from
outside), comes back on SIGCONT, and a clean shutdown stops it counting at once."""

import os
import signal

import pytest

from console.liveness.selectors import worker_liveness_get
from console.models import WorkerHeartbeat
from tests.helpers import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
FAST = {"WORKER_HEARTBEAT_SECONDS": "0.5", "WORKER_HEARTBEAT_STALE_SECONDS": "3"}


def test_heartbeat_appears_goes_stale_when_frozen_and_returns(start_worker, settings, client):
    settings.WORKER_HEARTBEAT_STALE_SECONDS = 3
    assert client.get("/readyz/worker").status_code == 503  # nobody yet
    worker = start_worker(FAST)
    wait_for(lambda: worker_liveness_get().ok, timeout=30, what="a heartbeat")
    row = WorkerHeartbeat.objects.get()
    assert row.pid == worker.pid
    assert row.hostname.startswith(f"test-{os.getpid()}-0@")
    assert row.queues == "actions,default,notifications"  # its -Q: a test worker takes all
    assert client.get("/readyz").json()["checks"]["worker"] == "ok"

    os.kill(worker.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: not worker_liveness_get().ok, timeout=30, what="the beat to go stale")
        ready = client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["checks"]["worker"].startswith("No worker has been seen for ")
        assert client.get("/readyz/worker").status_code == 503
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    wait_for(lambda: worker_liveness_get().ok, timeout=30, what="the beat to come back")

    worker.terminate()  # a clean (warm) shutdown
    worker.wait(timeout=30)
    assert WorkerHeartbeat.objects.get().stopped_at is not None
    assert client.get("/readyz/worker").status_code == 503
