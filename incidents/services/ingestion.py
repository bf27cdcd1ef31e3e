"""Alertmanager notifications -> alerts -> incidents, in one transaction per request.

The query count is constant whatever the number of alerts: one locking read of the
alerts concerned, one of the incidents concerned, then bulk writes (see
tests/unit/incidents/test_ingest_queries.py).

Order independence (tests/unit/incidents/test_ingest_properties.py): an alert episode is keyed by
(fingerprint, startsAt) and "resolved" always wins over "firing" for the same key, so
duplicated or reordered deliveries converge. An alert that arrives already resolved
never opens an incident; it waits unattached ("orphan") and joins its group's incident
if one is open, or opens later within the reopen window.
"""

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from incidents.alertmanager import ParsedAlert, ParsedPayload
from incidents.grouping import (
    group_labels_for,
    grouping_key_for,
    merge_duplicates,
    runbook_slug,
    severity_for,
    title_for,
)
from incidents.models import (
    OPEN_STATUSES,
    Alert,
    AlertStatus,
    Incident,
    IncidentStatus,
    ReceiptOutcome,
    TimelineEvent,
    TimelineEventType,
    WebhookReceipt,
)
from incidents.services.ingest_batch import Batch

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# PostgreSQL deadlock and serialization failures: safe to retry the whole transaction.
_RETRYABLE_SQLSTATES = {"40P01", "40001"}
_ALERT_FIELDS = [
    "status",
    "ends_at",
    "labels",
    "annotations",
    "generator_url",
    "severity",
    "incident_id",
    "last_received_at",
    "receive_count",
]
_INCIDENT_FIELDS = [
    "status",
    "severity",
    "acknowledged_at",
    "mitigated_at",
    "resolved_at",
    "reopened_at",
    "reopen_count",
    "last_alert_at",
    "updated_at",
]


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
    """Apply one webhook notification. Retries the whole transaction when a concurrent
    delivery won a unique constraint or the database broke a deadlock."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                return _ingest_once(payload, meta)
        except (IntegrityError, OperationalError) as exc:
            sqlstate = getattr(exc.__cause__, "sqlstate", None)
            retryable = isinstance(exc, IntegrityError) or sqlstate in _RETRYABLE_SQLSTATES
            if not retryable or attempt == MAX_ATTEMPTS:
                raise
            log.info("ingest attempt %s lost a race (%s); retrying", attempt, exc)
    raise AssertionError("unreachable")


AlertKey = tuple[str, datetime]  # (fingerprint, startsAt): one alert occurrence


@dataclass
class _Loaded:
    existing: dict[AlertKey, Alert]
    orphans: dict[str, list[Alert]]
    incidents: dict[int, Incident]
    open_by_group: dict[str, Incident]
    reopenable: dict[str, Incident]


def _load(incoming: dict[AlertKey, ParsedAlert], group_keys: set[str], now: datetime) -> _Loaded:
    """Two locking reads: the alerts concerned (plus recent orphans of these groups),
    then the incidents concerned. Rows are locked in primary-key order."""
    cutoff = now - timedelta(seconds=settings.INCIDENT_REOPEN_WINDOW_SECONDS)
    # Fingerprints plus the startsAt range, not two IN lists: a range scan per
    # fingerprint on the (fingerprint, starts_at) index instead of every combination.
    # Exact pairs are picked out below.
    starts = [s for _, s in incoming]
    known = Q(
        fingerprint__in={fp for fp, _ in incoming},
        starts_at__gte=min(starts),
        starts_at__lte=max(starts),
    )
    orphan = Q(incident__isnull=True, grouping_key__in=group_keys, last_received_at__gte=cutoff)
    rows = Alert.objects.select_for_update().filter(known | orphan).order_by("pk")
    existing: dict[AlertKey, Alert] = {}
    orphans: dict[str, list[Alert]] = defaultdict(list)
    for row in rows:
        key = (row.fingerprint, row.starts_at)
        if key in incoming:
            existing[key] = row
        elif (
            row.incident_id is None
            and row.grouping_key in group_keys
            and row.last_received_at >= cutoff
        ):
            orphans[row.grouping_key].append(row)

    held = {a.incident_id for a in existing.values() if a.incident_id}
    inc_q = Q(pk__in=held) | Q(grouping_key__in=group_keys, status__in=OPEN_STATUSES)
    inc_q |= Q(grouping_key__in=group_keys, status=IncidentStatus.RESOLVED, resolved_at__gte=cutoff)
    incidents = {i.pk: i for i in Incident.objects.select_for_update().filter(inc_q).order_by("pk")}
    open_by_group: dict[str, Incident] = {}
    reopenable: dict[str, Incident] = {}
    for inc in incidents.values():
        if inc.status != IncidentStatus.RESOLVED:
            open_by_group[inc.grouping_key] = inc
        elif inc.grouping_key in group_keys and inc.resolved_at and inc.resolved_at >= cutoff:
            best = reopenable.get(inc.grouping_key)
            if best is None or best.resolved_at is None or inc.resolved_at > best.resolved_at:
                reopenable[inc.grouping_key] = inc
    return _Loaded(existing, orphans, incidents, open_by_group, reopenable)


def _groups_needing_incident(
    incoming: dict[AlertKey, ParsedAlert],
    fired: set[AlertKey],
    keys_of: dict[AlertKey, str],
    loaded: _Loaded,
) -> dict[str, ParsedAlert]:
    """Groups with a firing alert that no live incident holds yet, and the first such
    alert (it names the new incident). A re-sent alert of an incident a person has
    already resolved is not news: it opens nothing."""
    wanted: dict[str, ParsedAlert] = {}
    for key, alert in incoming.items():
        if key not in fired:
            continue
        row = loaded.existing.get(key)
        if row is not None and row.incident_id is not None:
            inc = loaded.incidents.get(row.incident_id)
            if inc is None or inc.status == IncidentStatus.RESOLVED:
                continue
            if inc.grouping_key != keys_of[key]:
                # Sent under a second groupKey too (routes with `continue: true`): the
                # alert stays with its incident, so a new one here would stay empty.
                continue
        wanted.setdefault(keys_of[key], alert)
    return wanted


def _open_incidents(
    wanted: dict[str, ParsedAlert], payload: ParsedPayload, loaded: _Loaded, batch: Batch
) -> None:
    to_create: list[Incident] = []
    for group, alert in sorted(wanted.items()):
        if group in loaded.open_by_group:
            continue
        if group in loaded.reopenable:
            inc = loaded.reopenable.pop(group)
            batch.reopen(inc, alert)
            loaded.open_by_group[group] = inc
            continue
        inc = Incident(
            title=title_for(alert, payload),
            severity=severity_for(alert.labels.get("severity", "")),
            status=IncidentStatus.TRIGGERED,
            grouping_key=group,
            runbook=runbook_slug(alert),
            namespace=alert.labels.get("namespace", "")[:253],
            group_labels=group_labels_for(alert, payload),
            started_at=alert.starts_at,
            triggered_at=batch.now,
            last_alert_at=batch.now,
        )
        to_create.append(inc)
        loaded.open_by_group[group] = inc
    if not to_create:
        return
    # A concurrent delivery opening the same group loses on the partial unique
    # constraint here; alerts_ingest retries and then finds the winner's incident.
    Incident.objects.bulk_create(to_create)
    for inc in to_create:
        loaded.incidents[inc.pk] = inc
        batch.opened.append(inc.pk)
        batch.event(
            inc,
            TimelineEventType.INCIDENT_OPENED,
            f"Incident opened: {inc.title}",
            {"grouping_key": inc.grouping_key, "receiver": payload.receiver,
             "external_url": payload.external_url},
        )  # fmt: skip


def _ingest_once(payload: ParsedPayload, meta: ReceiptMeta) -> IngestResult:
    batch = Batch(timezone.now())
    incoming = merge_duplicates(payload.alerts)
    # Keys delivered as firing at least once in this body, even if a copy also says
    # resolved: the same facts split over two deliveries must end the same way.
    fired = {a.key for a in payload.alerts if a.status == "firing"}
    keys_of = {key: grouping_key_for(alert, payload) for key, alert in incoming.items()}
    if incoming:
        loaded = _load(incoming, set(keys_of.values()), batch.now)
        wanted = _groups_needing_incident(incoming, fired, keys_of, loaded)
        _open_incidents(wanted, payload, loaded, batch)
        for key, alert in incoming.items():
            live = loaded.open_by_group.get(keys_of[key])
            batch.upsert_alert(alert, loaded.existing.get(key), keys_of[key], live)
            if live is not None and key in fired:
                batch.escalate(live, alert)
        for group, inc in loaded.open_by_group.items():
            for orphan in loaded.orphans.get(group, ()):
                batch.adopt_orphan(orphan, inc)
        _write_alerts(batch)
        batch.alert_events(loaded.incidents)
        _settle(batch, loaded)
        if batch.dirty_incidents:
            Incident.objects.bulk_update(list(batch.dirty_incidents.values()), _INCIDENT_FIELDS)
        if batch.events:
            TimelineEvent.objects.bulk_create(batch.events)
    incident_ids = sorted({*batch.touched, *batch.opened, *batch.reopened})
    receipt = WebhookReceipt.objects.create(
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
    return IngestResult(
        receipt_id=receipt.pk,
        received=len(payload.alerts),
        incidents=incident_ids,
        opened=batch.opened,
        reopened=batch.reopened,
        mitigated=batch.mitigated,
    )


def _write_alerts(batch: Batch) -> None:
    """Three statements at most, whatever the number of alerts.

    New rows: a plain INSERT, so a concurrent delivery of the same new alert fails on
    the unique constraint and the whole delivery is retried with the row visible.
    Changed rows (locked by _load, so the values merged in Python are current): an
    INSERT ... ON CONFLICT DO UPDATE, which compiles far cheaper than bulk_update's
    CASE WHEN per field and row. Re-sent unchanged rows: one UPDATE of the bookkeeping.
    """
    if batch.new_alerts:
        Alert.objects.bulk_create(batch.new_alerts)
    if batch.changed_alerts:
        Alert.objects.bulk_create(
            [_unsaved_copy(row) for row in batch.changed_alerts],
            update_conflicts=True,
            unique_fields=["fingerprint", "starts_at"],
            update_fields=_ALERT_FIELDS,
        )
    if batch.resent_alert_ids:
        Alert.objects.filter(pk__in=batch.resent_alert_ids).update(
            last_received_at=batch.now, receive_count=F("receive_count") + 1
        )


def _unsaved_copy(row: Alert) -> Alert:
    # Without the primary key the upsert is keyed on (fingerprint, starts_at) alone,
    # and all rows go in one statement.
    copy = Alert(**{f.attname: getattr(row, f.attname) for f in Alert._meta.concrete_fields})
    copy.pk = None
    return copy


def _settle(batch: Batch, loaded: _Loaded) -> None:
    touched = batch.touched
    if not touched:
        return
    firing = dict(
        Alert.objects.filter(incident_id__in=touched, status=AlertStatus.FIRING)
        .values("incident_id")
        .annotate(n=Count("id"))
        .values_list("incident_id", "n")
    )
    for inc_id in sorted(touched):
        batch.settle(loaded.incidents[inc_id], firing.get(inc_id, 0))
