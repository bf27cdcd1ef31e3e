"""Stage 4, apply: one notification to the database, with its receipt. The entry point is
`alerts_ingest`; this module is the pipeline's spine, the stages after it (decide, write)
are called from here in the order the data goes through them.

The query count is constant whatever the number of alerts
(tests/unit/incidents/test_ingest_queries.py). An unchanged repeat of a group, most of
a storm, is one statement with its receipt, its own transaction (write.repeat_apply).
Anything else takes the full path (notification_apply) in one transaction: a locking
read of the alerts concerned, one of the incidents concerned, then one statement per
kind of write, sent without waiting for each answer where none is needed (pipeline mode).

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
from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from incidents.drill_claims import new_incidents_claim
from incidents.heartbeat_alerts import heartbeat_alerts_announce, heartbeat_alerts_split
from incidents.ingest import decide, write_postgres, write_sqlite
from incidents.ingest.decide import Batch
from incidents.ingest.group import Groups, groups_of
from incidents.ingest.parse import ParsedPayload, ReceiptMeta
from incidents.ingest.write import Writer
from incidents.models import ReceiptOutcome, WebhookReceipt
from incidents.timeline_signal import timeline_announce

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# PostgreSQL deadlock and serialization failures: safe to retry the whole transaction.
_RETRYABLE_SQLSTATES = {"40P01", "40001"}


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
    constraint or the database broke a deadlock. Heartbeat alerts (Watchdog) are taken
    out before grouping and announced once it commits (incidents/heartbeat_alerts.py);
    the receipt still counts them."""
    alerting, beats = heartbeat_alerts_split(payload)
    groups = groups_of(alerting)  # the body's alone: once, not per attempt
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            result = _attempt(payload, meta, groups)
            if beats:
                heartbeat_alerts_announce(
                    source=payload.external_url, alerts=beats, at=timezone.now()
                )
            return result
        except (IntegrityError, OperationalError) as exc:
            sqlstate = getattr(exc.__cause__, "sqlstate", None)
            retryable = isinstance(exc, IntegrityError) or sqlstate in _RETRYABLE_SQLSTATES
            if not retryable or attempt == MAX_ATTEMPTS:
                raise
            log.info("ingest attempt %s lost a race (%s); retrying", attempt, exc)
    raise AssertionError("unreachable")


def _attempt(payload: ParsedPayload, meta: ReceiptMeta, groups: Groups) -> IngestResult:
    now = timezone.now()
    since = now - timedelta(seconds=settings.INCIDENT_REOPEN_WINDOW_SECONDS)
    db = writer()
    receipt = _receipt(payload, meta, now)
    received = len(payload.alerts)
    # An unchanged repeat: applied with its receipt in one statement, or nothing written.
    if groups.incoming and (
        repeated := db.repeat_apply(
            groups=groups.specs, now=now, orphans_since=since, receipt=receipt
        )
    ):
        return IngestResult(receipt_id=repeated, received=received, incidents=[])
    with transaction.atomic():
        batch = Batch(now)
        if groups.incoming:
            notification_apply(db, payload, groups, batch, since, receipt)
        else:
            db.receipt_insert(receipt)
    return IngestResult(
        receipt_id=receipt.pk,
        received=received,
        incidents=receipt.incident_ids,
        opened=batch.opened,
        reopened=batch.reopened,
        mitigated=batch.mitigated,
    )


def writer() -> Writer:
    """The statements for this connection's database."""
    return write_postgres if connection.vendor == "postgresql" else write_sqlite


def _receipt(payload: ParsedPayload, meta: ReceiptMeta, now: datetime) -> WebhookReceipt:
    return WebhookReceipt(
        received_at=now,
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
        incident_ids=[],
        replay_of_id=meta.replay_of_id,
    )


def notification_apply(
    db: Writer,
    payload: ParsedPayload,
    groups: Groups,
    batch: Batch,
    since: datetime,
    receipt: WebhookReceipt,
) -> None:
    """The full path, its statements in the order they run, ending with the receipt;
    `since` starts the reopen window (and how far back orphans are picked up). Decisions
    and statements take turns only where a decision needs what a statement returns: the
    new incidents' ids (their alerts and timeline entries point at them) and the firing
    counts (read once the alerts are written). Statements that need no answer before the
    next go out together (db.pipeline): from BEGIN to COMMIT, a new group or a resolution
    costs 5 round trips (was 8 and 9)."""
    # 1. Lock and read the alerts the body names and its groups' recent orphans, then
    #    the incidents concerned. Rows are locked in primary-key order.
    group_keys = sorted(groups.digests)
    rows, found = db.rows_for_update(
        keys=list(groups.incoming),
        groups=group_keys,
        orphans_since=since,
        resolved_since=since,
    )
    # 2. Reopen the groups' recently resolved incidents, insert the new ones (a concurrent
    #    delivery opening the same group loses on the partial unique constraint here, and
    #    alerts_ingest retries it against the winner's incident).
    loaded = decide.loaded(rows, found, groups, since)
    new = decide.incidents_to_open(payload, groups, loaded, batch)
    new_incidents_claim(new, groups)  # a running drill's incident opens as a drill
    db.models_insert(new)
    # 3. Merge the alerts into their rows, and write them.
    decide.alerts_merge(payload, groups, loaded, batch, new)
    with db.pipeline():
        db.alerts_insert([row.inserted() for row in batch.new_alerts])
        db.alerts_update([row.updated() for row in batch.stored_alerts.values()])
        # 4. Settle each incident touched (counting firing alerts only for those this
        #    delivery did not leave firing), write the incidents back, the timeline
        #    entries and the receipt.
        counts = db.firing_counts(sorted(batch.touched - batch.firing))
        db.incidents_update(decide.incidents_settle(batch, loaded, counts, groups.digests))
        db.models_insert(batch.events)
        receipt.incident_ids = sorted({*batch.touched, *batch.opened, *batch.reopened})
        db.receipt_insert(receipt)
    timeline_announce(batch.events)  # after the block: the entries have their ids
