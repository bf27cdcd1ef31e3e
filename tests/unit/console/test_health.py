import logging

import pytest
from django.db import connection

from config.celery import app as celery_app

pytestmark = pytest.mark.django_db


def test_healthz(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_readyz_ok(client):
    r = client.get("/readyz")
    assert r.status_code == 200, r.content
    assert r.json()["checks"] == {
        "database": "ok",
        "broker": "ok",
        "worker": "No worker has been seen yet",  # test_worker_liveness.py
        "queues": "ok",
    }


def test_readyz_503_when_the_broker_is_unreachable(client):
    old = celery_app.conf.broker_url
    celery_app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        r = client.get("/readyz")
    finally:
        celery_app.conf.broker_url = old
    assert r.status_code == 503
    assert "broker" in r.json()["problems"]


# --- an anonymous caller never reads a component's error text ----------------------------
PROBE_USER = "readyz_probe_secret_user"


@pytest.fixture
def database_refusing_sign_in():
    """The default connection re-opened as a role the server does not know: the driver's
    real error names the host, port and user. Transactional: the connection is closed
    and re-opened, which a test transaction would not survive."""
    old = connection.settings_dict["USER"]
    connection.close()
    connection.settings_dict["USER"] = PROBE_USER
    try:
        yield connection.settings_dict
    finally:
        connection.close()
        connection.settings_dict["USER"] = old


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL sign-in error")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/readyz", "/readyz/worker"])
def test_database_failure_shows_a_fixed_text_and_logs_the_detail(
    client, caplog, database_refusing_sign_in, path
):
    db = database_refusing_sign_in
    with caplog.at_level(logging.WARNING, logger="console.liveness.probes"):
        r = client.get(path)
    assert r.status_code == 503
    assert r.json() == {"status": "unavailable", "problems": {"database": "database unavailable"}}
    for secret in (PROBE_USER, str(db["PORT"] or 5432), db["HOST"] or "127.0.0.1"):
        assert secret not in r.content.decode()
    assert PROBE_USER in caplog.text  # the operator reads the driver's error in the log


def test_broker_failure_shows_a_fixed_text_and_logs_the_detail(client, caplog):
    old = celery_app.conf.broker_url
    celery_app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        with caplog.at_level(logging.WARNING, logger="console.liveness.probes"):
            r = client.get("/readyz")
    finally:
        celery_app.conf.broker_url = old
    assert r.status_code == 503
    assert r.json()["problems"] == {"broker": "broker unavailable"}
    assert "127.0.0.1" not in r.content.decode()
    assert "127.0.0.1:1" in caplog.text or "Connection refused" in caplog.text


@pytest.mark.skipif(connection.vendor != "postgresql", reason="transactional DDL")
def test_worker_check_failure_shows_a_fixed_text_and_logs_the_detail(client, caplog):
    # The heartbeat table gone (migrations not applied yet): rolled back with the test.
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE console_workerheartbeat RENAME TO readyz_hidden_table")
    with caplog.at_level(logging.WARNING, logger="console.liveness.probes"):
        r = client.get("/readyz")
    assert r.status_code == 200
    assert r.json()["checks"]["worker"] == "unknown"
    assert "console_workerheartbeat" not in r.content.decode()
    assert "console_workerheartbeat" in caplog.text
