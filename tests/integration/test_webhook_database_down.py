"""With the database unreachable the webhook answers 503, which Alertmanager retries
(a 4xx would make it drop the notification). Readiness says why."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.helpers import free_port, port_open, wait_for
from tests.payloads import alert, notification

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server_without_database(tmp_path):
    dead = free_port()
    assert not port_open("127.0.0.1", dead)
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{dead}/nowhere",
        "CELERY_BROKER_URL": "filesystem://",
        "SECRET_KEY": "db-down-test",
        "ALERTMANAGER_TOKEN": "t0ken",
        "VAR_DIR": str(tmp_path),
    }
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application",
         "--bind", f"127.0.0.1:{port}", "--workers", "1", "--no-control-socket"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: requests.get(base + "/healthz", timeout=2).ok, timeout=30,
                 what="gunicorn")  # fmt: skip
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_webhook_answers_503_and_readyz_explains(server_without_database):
    base = server_without_database
    r = requests.post(
        base + "/api/v1/alerts/alertmanager",
        json=notification([alert()]),
        headers={"Authorization": "Bearer t0ken"},
        timeout=20,
    )
    assert r.status_code == 503
    assert "retry" in r.json()["error"]
    # A bad token is still refused without touching the database.
    r = requests.post(base + "/api/v1/alerts/alertmanager", json={}, timeout=5)
    assert r.status_code == 401
    ready = requests.get(base + "/readyz", timeout=20)
    assert ready.status_code == 503
    assert "database" in ready.json()["problems"]
    assert requests.get(base + "/healthz", timeout=5).status_code == 200
