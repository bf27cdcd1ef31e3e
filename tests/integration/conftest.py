"""Real processes for integration tests: a Celery worker on Redis and PostgreSQL, and
Alertmanager notifying the live server's webhook."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.db import connection

from tests.conftest import need_service
from tests.helpers import free_port, port_open, wait_for

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
REDIS_URL = "redis://127.0.0.1:6379/15"
KEY_PREFIX = os.environ["CELERY_BROKER_KEY_PREFIX"]  # set per run by config.settings_test


def database_url() -> str:
    """The URL of the test database pytest-django created (test_<name>)."""
    s = connection.settings_dict
    user = s.get("USER") or "postgres"
    return f"postgres://{user}@{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


@pytest.fixture
def require_postgres():
    need_service("PostgreSQL", connection.vendor == "postgresql", "tests ran on SQLite")


@pytest.fixture
def redis_broker():
    need_service("Redis", port_open("127.0.0.1", 6379), "nothing on 127.0.0.1:6379")
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_timeout=2)
    assert settings.CELERY_BROKER_URL == REDIS_URL
    _forget_own_keys(client)  # stale messages of this run would confuse the next test
    yield client
    _forget_own_keys(client)


def _forget_own_keys(client) -> None:
    """Delete this run's keys only: db 15 may hold another concurrent run's queues."""
    for key in client.scan_iter(match=KEY_PREFIX + "*", count=500):
        client.delete(key)


@pytest.fixture
def start_worker(require_postgres, redis_broker, tmp_path):
    """Start real `celery worker` processes consuming every queue (config.celery_routes) from
    Redis and writing to the test's own database; `extra_env` adds settings (KUBECONFIG,
    ACTIONS_*). Returns the process; each has its log at `proc.log_path`."""
    procs = []

    def _start(extra_env: dict | None = None, *, concurrency: int = 1) -> subprocess.Popen:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": REDIS_URL,
            "CELERY_BROKER_KEY_PREFIX": KEY_PREFIX,
            # The test process's: the targets it stores are encrypted under it.
            "SECRET_KEY": os.environ["SECRET_KEY"],
            "ALERTMANAGER_TOKEN": "test-alertmanager-token",
            "VAR_DIR": str(tmp_path),
            **(extra_env or {}),
        }
        n = len(procs)
        log_path = tmp_path / f"worker-{n}.log"
        log = open(log_path, "w+")  # noqa: SIM115
        proc = subprocess.Popen(
            [str(BIN / "celery"), "-A", "config", "worker",
             "-Q", "default,actions,notifications",
             "--concurrency", str(concurrency), "--pool", "prefork", "--loglevel", "INFO",
             "--hostname", f"test-{os.getpid()}-{n}@%h"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        proc.log_path = log_path
        procs.append((proc, log))

        def ready():
            log.seek(0)
            text = log.read()
            if proc.poll() is not None:
                raise AssertionError(f"worker exited:\n{text[-3000:]}")
            return " ready." in text

        wait_for(ready, timeout=60, what="the Celery worker to be ready")
        return proc

    yield _start
    for proc, log in procs:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def celery_worker_process(start_worker):
    """One worker with the default settings."""
    return start_worker()


@pytest.fixture
def make_run(tmp_path):
    """Start the embedded run as a user does: `make run` (SQLite, filesystem broker, a
    real worker, the simulator, Prometheus and Alertmanager), or with console_only just
    web and worker; every port free (tests/run_stack.py)."""
    from tests.run_stack import start_run, stop_runs

    procs = []

    def start(extra_env: dict | None = None, *, console_only: bool = False) -> dict:
        return start_run(tmp_path, procs, extra_env, console_only=console_only)

    yield start
    stop_runs(procs)


# --- Alertmanager --------------------------------------------------------------------
ALERTMANAGER_BINARY = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")

ALERTMANAGER_CONFIG = """
route:
  receiver: console
  group_by: [alertname, lws]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: console
    webhook_configs:
      - url: {url}
        send_resolved: true
        max_alerts: 0
        http_config:
          authorization:
            type: Bearer
            credentials: test-alertmanager-token
"""


@pytest.fixture
def alertmanager(live_server, tmp_path):
    """The real Alertmanager on a free port, notifying the live server's webhook (its
    silences API is the one the console talks to); yields its base URL."""
    binary = ALERTMANAGER_BINARY
    need_service("Alertmanager", binary is not None, "install prometheus-alertmanager")
    port = free_port()
    (tmp_path / "am.yml").write_text(
        ALERTMANAGER_CONFIG.format(url=live_server.url + "/api/v1/alerts/alertmanager")
    )
    log = open(tmp_path / "am.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [binary, f"--config.file={tmp_path / 'am.yml'}", f"--storage.path={tmp_path}",
         f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: requests.get(base + "/-/ready", timeout=1).ok, timeout=30,
                 what="Alertmanager to start")  # fmt: skip
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.seek(0)
        print(log.read()[-4000:])  # shown only when the test fails
        log.close()
