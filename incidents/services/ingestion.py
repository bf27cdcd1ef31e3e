"""Alertmanager notifications -> alerts -> incidents, in one transaction per request.

The query count is constant whatever the number of alerts
(tests/unit/incidents/test_ingest_queries.py). An unchanged repeat of a group, most of
a storm, is one statement with its receipt, its own transaction
(ingestion_sql.repeat_apply). Anything else takes the full path (ingestion_apply) in
one transaction: a locking read of the alerts concerned, one of the incidents
concerned, then one statement per kind of write.

Order independence (tests/unit/incidents/test_ingest_properties.py): an alert episode
is keyed by (fingerprint, startsAt) and "resolved" always wins over "firing" for the
same key, so duplicated or reordered deliveries converge. An alert that arrives already resolved
never opens an incident; it waits unattached ("orphan") and joins its group's incident
if one is open, or opens later within the reopen window.

Alertmanager replicas in HA each deliver the same notification, often at the same moment
(tests/unit/incidents/test_ingest_replicas.py forces the worst interleaving;
tests/integration/test_alertmanager_ha.py runs real clustered and lone replicas). The
later delivery either waits on the earlier one's row locks and then reads its result, or
loses on a unique constraint (one open incident per group, one row per alert episode)
and is retried against it: it changes nothing, so it writes no timeline entry, and so
no notification; only its receipt records that it came.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.utils import timezone

from incidents.alertmanager import ParsedAlert, ParsedPayload
from incidents.grouping import merge_duplicates
from incidents.models import ReceiptOutcome, WebhookReceipt
from incidents.services import ingestion_sql
from incidents.services.ingest_batch import AlertKey, Batch
from incidents.services.ingestion_apply import Groups, groups_of, notification_apply

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# PostgreSQL deadlock and serialization failures: safe to retry the whole transaction.
_RETRYABLE_SQLSTATES = {"40P01", "40001"}


@dataclass
class ReceiptMeta:
    body: str
    body_bytes: int
    remote_addr: str | None = None
    user_agent: str = ""
    source: str = "alertmanager"
    replay_of_id: int | None = None
    body_raw: bytes | None = None  # set when the bytes are not storable text

    @classmethod
    def for_bytes(cls, raw: bytes, **kw: Any) -> "ReceiptMeta":
        """Valid UTF-8 without NUL is kept as text; anything else as the exact bytes."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\x00" in text:
            return cls(body="", body_raw=raw, body_bytes=len(raw), **kw)
        return cls(body=text, body_bytes=len(raw), **kw)


@dataclass
class IngestResult:
    receipt_id: int
    received: int
    incidents: list[int]
    opened: list[int] = field(default_factory=list)
    reopened: list[int] = field(default_factory=list)
    mitigated: list[int] = field(default_factory=list)

    def as_response(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "incidents": self.incidents,
            "opened": self.opened,
            "reopened": self.reopened,
            "mitigated": self.mitigated,
            "receipt": self.receipt_id,
        }


def alerts_ingest(*, payload: ParsedPayload, meta: ReceiptMeta) -> IngestResult:
    """Apply one webhook notification. Retries when a concurrent delivery won a unique
    constraint or the database broke a deadlock."""
    incoming = merge_duplicates(payload.alerts)
    # Keys delivered as firing at least once in this body, even if a copy also says
    # resolved: the same facts split over two deliveries must end the same way.
    fired = {a.key for a in payload.alerts if a.status == "firing"}
    groups = groups_of(payload, incoming, fired)  # the body's alone: once, not per attempt
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            batch = Batch(timezone.now())
            if incoming and (repeated := _repeat_once(payload, meta, groups, batch)):
                return repeated
            with transaction.atomic():
                return _ingest_once(payload, meta, incoming, fired, groups, batch)
        except (IntegrityError, OperationalError) as exc:
            sqlstate = getattr(exc.__cause__, "sqlstate", None)
            retryable = isinstance(exc, IntegrityError) or sqlstate in _RETRYABLE_SQLSTATES
            if not retryable or attempt == MAX_ATTEMPTS:
                raise
            log.info("ingest attempt %s lost a race (%s); retrying", attempt, exc)
    raise AssertionError("unreachable")


def _orphans_since(batch: Batch) -> datetime:
    return batch.now - timedelta(seconds=settings.INCIDENT_REOPEN_WINDOW_SECONDS)


def _repeat_once(
    payload: ParsedPayload, meta: ReceiptMeta, groups: Groups, batch: Batch
) -> "IngestResult | None":
    """An unchanged repeat, applied with its receipt in one statement; None if it is not
    one (nothing written)."""
    receipt = _receipt(payload, meta, batch, incident_ids=[])
    receipt_id = ingestion_sql.repeat_apply(
        groups=groups.specs, now=batch.now, orphans_since=_orphans_since(batch), receipt=receipt
    )
    if not receipt_id:
        return None
    return IngestResult(receipt_id=receipt_id, received=len(payload.alerts), incidents=[])


def _receipt(
    payload: ParsedPayload, meta: ReceiptMeta, batch: Batch, *, incident_ids: list[int]
) -> WebhookReceipt:
    return WebhookReceipt(
        received_at=batch.now,
        source=meta.source,
        remote_addr=meta.remote_addr,
        user_agent=meta.user_agent[:300],
        body=meta.body,
        body_raw=meta.body_raw,
        body_bytes=meta.body_bytes,
        outcome=ReceiptOutcome.REPLAYED if meta.replay_of_id else ReceiptOutcome.ACCEPTED,
        http_status=200,
        group_key=payload.group_key[:1000],
        alert_count=len(payload.alerts),
        incident_ids=incident_ids,
        replay_of_id=meta.replay_of_id,
    )


def _ingest_once(
    payload: ParsedPayload,
    meta: ReceiptMeta,
    incoming: dict[AlertKey, ParsedAlert],
    fired: set[AlertKey],
    groups: Groups,
    batch: Batch,
) -> IngestResult:
    if incoming:
        notification_apply(payload, incoming, fired, groups, batch)
    incident_ids = sorted({*batch.touched, *batch.opened, *batch.reopened})
    receipt = _receipt(payload, meta, batch, incident_ids=incident_ids)
    return IngestResult(
        receipt_id=ingestion_sql.receipt_insert(receipt),
        received=len(payload.alerts),
        incidents=incident_ids,
        opened=batch.opened,
        reopened=batch.reopened,
        mitigated=batch.mitigated,
    )
