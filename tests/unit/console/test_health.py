import pytest

from console.celery import app as celery_app

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
