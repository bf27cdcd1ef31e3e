"""Issue 25 item 4 against the real Alertmanager (the `alertmanager` fixture): an alert is
silenced, then resolves; Alertmanager sends no resolved notification for a silenced
alert, so the webhook leaves the incident firing. Reconciling with Alertmanager's own
view (`GET /api/v2/alerts`) shows the alert silenced while it is, and ends it, and
mitigates the incident, once Alertmanager no longer lists it."""

import time
from datetime import UTC, datetime, timedelta

import pytest
import requests
from django.utils import timezone

from incidents.alertmanager_view.services import alertmanager_reconcile
from incidents.models import Incident, TimelineEvent
from tests.helpers import wait_for
from tests.payloads import stalled_engine_alert

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(120),
    pytest.mark.django_db(transaction=True),
]
POD = "vllm-chat-7-0"


def post_alert(base: str, starts: datetime, ends: datetime | None = None) -> None:
    r = requests.post(
        base + "/api/v2/alerts", json=[stalled_engine_alert(POD, starts, ends)], timeout=5
    )
    assert r.status_code == 200, r.text


def silence(base: str) -> str:
    body = {
        "matchers": [{"name": "pod", "value": POD, "isRegex": False, "isEqual": True}],
        "startsAt": timezone.now().isoformat(),
        "endsAt": (timezone.now() + timedelta(hours=1)).isoformat(),
        "createdBy": "bob@example.com",
        "comment": "draining",
    }
    r = requests.post(base + "/api/v2/silences", json=body, timeout=5)
    assert r.status_code == 200, r.text
    return r.json()["silenceID"]


def listed(base: str) -> list[dict]:
    return requests.get(base + "/api/v2/alerts", timeout=5).json()


def test_a_silenced_alert_that_resolved_ends_its_incident_only_by_reconciling(
    alertmanager, settings
):
    settings.ALERTMANAGER_URL = alertmanager
    settings.ALERTMANAGER_RECONCILE_GRACE_SECONDS = 0
    starts = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=2)
    post_alert(alertmanager, starts)
    incident = wait_for(
        lambda: Incident.objects.filter(alerts__labels__pod=POD).first(),
        timeout=30,
        what="Alertmanager to notify the console",
    )
    alert = incident.alerts.get()

    silence_id = silence(alertmanager)
    wait_for(
        lambda: [a["status"]["state"] for a in listed(alertmanager)] == ["suppressed"],
        timeout=15,
        what="Alertmanager to mark the alert silenced",
    )
    alertmanager_reconcile()
    alert.refresh_from_db()
    assert (alert.status, alert.am_state, alert.am_silenced_by) == (
        "firing",
        "silenced",
        [silence_id],
    )

    # The fleet recovers: Prometheus sends the alert resolved. Alertmanager holds the
    # resolved notification back (silenced) and stops listing the alert.
    post_alert(alertmanager, starts, ends=datetime.now(UTC))
    wait_for(lambda: listed(alertmanager) == [], timeout=15, what="the alert to resolve")
    time.sleep(3)  # group_interval is 1 s: a resolved notification would have come
    incident.refresh_from_db()
    alert.refresh_from_db()
    assert (incident.status, alert.status) == ("triggered", "firing")  # the bug

    result = alertmanager_reconcile()
    incident.refresh_from_db()
    alert.refresh_from_db()
    assert (alert.status, alert.am_state) == ("resolved", "gone")
    assert incident.status == "mitigated"
    assert result.mitigated == [incident.pk]
    assert TimelineEvent.objects.filter(
        incident=incident,
        message="Alertmanager no longer lists VLLMEngineStalled: ended (reconciled).",
    ).exists()
