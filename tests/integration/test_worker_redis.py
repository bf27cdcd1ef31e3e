"""A real Celery worker process consumes from real Redis and writes to PostgreSQL."""

import json

import pytest

from incidents import services
from incidents.ingest.parse import ReceiptMeta
from incidents.models import Incident, ReceiptOutcome, TimelineEvent, WebhookReceipt
from tests.helpers import wait_for
from tests.payloads import alert, notification

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def failed_receipt() -> WebhookReceipt:
    """A valid body that could not be applied (say the database was failing over)."""
    text = json.dumps(notification([alert(pod="vllm-chat-4"), alert(pod="vllm-chat-5")]))
    return services.webhook_receipt_record(
        meta=ReceiptMeta(body=text, body_bytes=len(text)),
        outcome=ReceiptOutcome.FAILED,
        http_status=503,
        error="database error during ingestion",
    )


def test_worker_replays_a_failed_webhook_body(celery_worker_process, make_user):
    commander = make_user("cmd", role="commander")
    original = failed_receipt()
    services.webhook_receipt_replay_request(receipt_id=original.pk, actor=commander)

    replay = wait_for(
        lambda: WebhookReceipt.objects.filter(replay_of=original).first(),
        timeout=30,
        what="the worker to replay the receipt",
    )
    assert replay.outcome == ReceiptOutcome.REPLAYED
    assert replay.source == "replay"
    incident = Incident.objects.get()
    assert incident.alerts.count() == 2
    # The worker records the replay on the timeline in its own, later transaction.
    event = wait_for(
        lambda: TimelineEvent.objects.filter(kind="webhook_replayed").first(),
        timeout=30,
        what="the replay on the timeline",
    )
    assert event.actor == commander
    assert event.payload["msg"] == [
        ["incidents.receipt.replayed", {"receipt": original.pk, "replay": replay.pk}]
    ]
    assert {k: v for k, v in event.payload.items() if k != "msg"} == {
        "receipt": original.pk,
        "replay": replay.pk,
    }


def test_a_replay_delivered_twice_applies_once(celery_worker_process, make_user):
    commander = make_user("cmd", role="commander")
    original = failed_receipt()
    services.webhook_receipt_replay_request(receipt_id=original.pk, actor=commander)
    services.webhook_receipt_replay_request(receipt_id=original.pk, actor=commander)
    wait_for(
        lambda: WebhookReceipt.objects.filter(replay_of=original).count() == 2,
        timeout=30,
        what="both replays",
    )
    assert Incident.objects.count() == 1
    assert Incident.objects.get().alerts.count() == 2
