"""Real processes for integration tests: a Celery worker on Redis and PostgreSQL."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import need_service
from tests.helpers import port_open, wait_for

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
REDIS_URL = "redis://127.0.0.1:6379/15"


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
    client.flushdb()  # db 15 is the tests' own; stale messages would confuse them
    assert settings.CELERY_BROKER_URL == REDIS_URL
    yield client
    client.flushdb()


@pytest.fixture
def celery_worker_process(require_postgres, redis_broker, tmp_path):
    """A real `celery worker` process consuming default and actions queues from Redis,
    writing to the same test database as the test."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": REDIS_URL,
        "SECRET_KEY": "integration-test",
        "ALERTMANAGER_TOKEN": "test-alertmanager-token",
        "VAR_DIR": str(tmp_path),
    }
    log = open(tmp_path / "worker.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [str(BIN / "celery"), "-A", "console", "worker", "-Q", "default,actions",
         "--concurrency", "1", "--pool", "prefork", "--loglevel", "INFO",
         "--hostname", f"test-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip

    def ready():
        log.seek(0)
        text = log.read()
        if proc.poll() is not None:
            raise AssertionError(f"worker exited:\n{text[-3000:]}")
        return " ready." in text

    try:
        wait_for(ready, timeout=60, what="the Celery worker to be ready")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
