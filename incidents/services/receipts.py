"""The webhook receipt log: dead letters, replays after a fix, and retention."""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.permissions import require
from console.texts import msg
from incidents import permissions as perms

# cycle: tasks imports these services; the module, its task looked up when called.
from incidents import tasks
from incidents.ingest.apply import IngestResult, alerts_ingest
from incidents.ingest.parse import PayloadError, ReceiptMeta, parse_body
from incidents.models import ReceiptOutcome, TimelineEvent, TimelineEventType, WebhookReceipt
from incidents.timeline_signal import timeline_announce

log = logging.getLogger(__name__)


def webhook_receipt_record(
    *,
    meta: ReceiptMeta,
    outcome: str,
    http_status: int,
    error: str = "",
    error_field: str = "",
) -> WebhookReceipt:
    """Keep a body we could not apply, so nothing is lost and it can be replayed."""
    return WebhookReceipt.objects.create(
        received_at=timezone.now(),
        source=meta.source,
        remote_addr=meta.remote_addr,
        user_agent=meta.user_agent[:300],
        body=meta.body,
        body_raw=meta.body_raw,
        body_bytes=meta.body_bytes,
        outcome=outcome,
        http_status=http_status,
        error=error[:5000],
        error_field=error_field[:200],
        replay_of_id=meta.replay_of_id,
    )


def _outcome_text(outcome: str) -> str:
    return str(ReceiptOutcome(outcome).label).lower()


# Lazy: "accepted" in the refusal's English, the label in the page's language.
_outcome_word = lazy(_outcome_text, str)


def webhook_receipt_replay_request(*, receipt_id: int, actor: User) -> WebhookReceipt:
    """Queue a dead-lettered body for another try (after fixing the cause)."""
    require(actor, perms.REPLAY_RECEIPTS, gettext_lazy("replay webhook bodies"))
    receipt = WebhookReceipt.objects.filter(pk=receipt_id).first()
    if receipt is None:
        raise DomainError(
            gettext_noop("Webhook receipt #%(id)s does not exist."),
            code="not_found",
            params={"id": receipt_id},
        )
    if receipt.outcome not in (ReceiptOutcome.REJECTED, ReceiptOutcome.FAILED):
        raise DomainError(
            gettext_noop(
                "Receipt #%(id)s was %(outcome)s; only rejected or failed bodies can be replayed."
            ),
            params={"id": receipt_id, "outcome": _outcome_word(receipt.outcome)},
        )
    transaction.on_commit(lambda: tasks.webhook_receipt_replay.delay(receipt_id, actor.pk))
    return receipt


def webhook_receipt_replay(*, receipt_id: int, actor_id: int | None = None) -> WebhookReceipt:
    """Run a stored body through ingestion again; the outcome is a new receipt row."""
    original = WebhookReceipt.objects.get(pk=receipt_id)
    raw = original.raw_bytes
    meta = ReceiptMeta.for_bytes(raw, source="replay", replay_of_id=original.pk)
    try:
        payload = parse_body(raw)
    except PayloadError as exc:
        return webhook_receipt_record(
            meta=meta,
            outcome=ReceiptOutcome.REJECTED,
            http_status=400,
            error=exc.message,
            error_field=exc.field,
        )
    result: IngestResult = alerts_ingest(payload=payload, meta=meta)
    replayed = WebhookReceipt.objects.get(pk=result.receipt_id)
    said = msg("incidents.receipt.replayed", receipt=original.pk, replay=replayed.pk)
    with transaction.atomic():
        events = TimelineEvent.objects.bulk_create(
            TimelineEvent(
                incident_id=incident_id,
                kind=TimelineEventType.WEBHOOK_REPLAYED,
                occurred_at=timezone.now(),
                actor_id=actor_id,
                source="console",
                message=said.english,
                payload={"receipt": original.pk, "replay": replayed.pk, "msg": said.stored},
            )
            for incident_id in result.incidents
        )
        timeline_announce(events)
    return replayed


def webhook_receipts_prune(*, now: datetime | None = None) -> int:
    """Delete accepted bodies past retention; dead letters are kept four times longer."""
    now = now or timezone.now()
    days = settings.WEBHOOK_RECEIPT_RETENTION_DAYS
    ok = WebhookReceipt.objects.filter(
        outcome__in=(ReceiptOutcome.ACCEPTED, ReceiptOutcome.REPLAYED),
        received_at__lt=now - timedelta(days=days),
    ).delete()[0]
    dead = WebhookReceipt.objects.filter(
        outcome__in=(ReceiptOutcome.REJECTED, ReceiptOutcome.FAILED),
        received_at__lt=now - timedelta(days=4 * days),
    ).delete()[0]
    if ok or dead:
        log.info("pruned %s accepted and %s dead-letter webhook receipts", ok, dead)
    return ok + dead
