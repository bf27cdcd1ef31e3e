"""Smoke test of the embedded run, as a user starts it: `make run` on SQLite and the
filesystem broker, with a real worker process. Post a webhook, see the incident page,
and have the worker process a task (a dead-letter replay) through the broker folder."""

import json
import sqlite3
from pathlib import Path

import pytest
import requests

from tests.helpers import wait_for
from tests.payloads import alert, notification

pytestmark = [pytest.mark.smoke, pytest.mark.timeout(240)]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def stack(make_run):
    return make_run(console_only=True)


def test_make_run_serves_the_console_and_the_worker_consumes(stack):
    base, token = stack["base"], stack["token"]
    assert (stack["var"] / "console.sqlite3").exists()
    hook = base + "/api/v1/alerts/alertmanager"
    auth = {"Authorization": f"Bearer {token}"}
    body = notification(
        [alert(pod="vllm-chat-9", alertname="VLLMKVCachePressure", runbook="long-context-kv")],
        group_key='{}:{alertname="VLLMKVCachePressure"}',
        alertname="VLLMKVCachePressure",
    )
    r = requests.post(hook, json=body, headers=auth, timeout=10)
    assert r.status_code == 200, r.text
    incident_id = r.json()["opened"][0]
    assert requests.post(hook, json=body, headers=auth, timeout=10).json()["opened"] == []

    s = stack["login"]()
    page = s.get(f"{base}/incidents/{incident_id}/", timeout=5)
    assert page.status_code == 200
    assert "VLLMKVCachePressure" in page.text
    assert "vllm-chat-9" in page.text
    listing = s.get(base + "/", timeout=5)
    assert f"/incidents/{incident_id}/" in listing.text

    # A body that failed to apply, replayed by the worker through the filesystem broker.
    bad = json.dumps(body).replace('"startsAt"', '"startsAtX"', 1)
    r = requests.post(hook, data=bad, headers={**auth, "Content-Type": "application/json"},
                      timeout=10)  # fmt: skip
    assert r.status_code == 400
    receipt = r.json()["receipt"]
    r = s.post(
        f"{base}/receipts/{receipt}/replay/",
        headers={"X-CSRFToken": s.cookies["csrftoken"], "Referer": base + "/"}, timeout=5,
    )  # fmt: skip
    assert r.status_code in (200, 302), r.text[:300]

    def replayed():
        db = sqlite3.connect(stack["var"] / "console.sqlite3", timeout=5)
        try:
            return db.execute(
                "SELECT outcome, source FROM incidents_webhookreceipt WHERE replay_of_id = ?",
                (receipt,),
            ).fetchone()
        finally:
            db.close()

    outcome, source = wait_for(replayed, timeout=60, what="the worker to replay the dead letter")
    assert (outcome, source) == ("rejected", "replay")  # still malformed, but processed
