"""End to end on real processes: Alertmanager's webhook opens an incident, the commit
queues a notification on real Redis, a real Celery worker posts it to a local receiver
that answers 500 first, and the worker's backoff retry delivers it, signed."""

import hashlib
import hmac
import json

import pytest

from incidents.models import Incident
from notifications.models import Delivery, DeliveryStatus, Rule, Target, TargetKind
from tests.helpers import wait_for
from tests.payloads import alert, notification
from tests.unit.notifications.receiver import Receiver

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SECRET = "integration-signing-secret"


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


def test_ingest_to_a_signed_webhook_through_a_real_worker_with_a_retry(
    start_worker, post_webhook, receiver, settings
):
    # The receiver is on loopback, which the outgoing guard refuses unless allowlisted.
    start_worker({"NOTIFY_RETRY_BACKOFF_SECONDS": "1", "OUTGOING_URL_ALLOWLIST": "127.0.0.1/32"})
    settings.NOTIFY_CONSOLE_URL = "https://console.test"  # the message is written at ingest
    target = Target.objects.create(
        name="ops", kind=TargetKind.WEBHOOK, url=f"{receiver.url}/hook", secret=SECRET
    )
    Rule.objects.create(name="sev1 pages", severities=["SEV1"]).targets.set([target])
    receiver.answer(500)

    assert post_webhook(notification([alert(severity="critical")])).status_code == 200
    incident = Incident.objects.get()

    delivery = wait_for(
        lambda: Delivery.objects.filter(status=DeliveryStatus.SENT).first(),
        timeout=60,
        what="the worker to deliver the notification after one retry",
    )
    assert delivery.attempts == 2
    assert len(receiver.received) == 2
    first, second = receiver.received
    assert first.body == second.body  # the retry sends the same message
    body = json.loads(second.body)
    assert body["event"] == "incident_opened"
    assert body["incident"]["id"] == incident.pk
    assert body["url"] == f"https://console.test/incidents/{incident.pk}/"
    timestamp = second.headers["X-Console-Timestamp"]
    mac = hmac.new(SECRET.encode(), f"{timestamp}.".encode() + second.body, hashlib.sha256)
    assert second.headers["X-Console-Signature"] == f"sha256={mac.hexdigest()}"
