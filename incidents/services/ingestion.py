"""Alertmanager notifications -> alerts -> incidents, in one transaction per request.

The query count is constant whatever the number of alerts: one locking read of the
alerts concerned, one of the incidents concerned, then bulk writes.

Order independence (tests/unit/test_ingest_properties.py): an alert episode is keyed by
(fingerprint, startsAt) and "resolved" always wins over "firing" for the same key, so
duplicated or reordered deliveries converge. An alert that arrives already resolved
never opens an incident; it waits, unattached ("orphan"), and joins its group's
incident if one is open or opens within the reopen window.
"""

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from incidents.alertmanager import ParsedAlert, ParsedPayload
from incidents.lifecycle import apply_transition, retrigger_status
from incidents.models import (
    OPEN_STATUSES,
    Alert,
    AlertStatus,
    Incident,
    IncidentStatus,
    ReceiptOutcome,
    Severity,
    TimelineEvent,
    TimelineEventType,
    WebhookReceipt,
)

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# PostgreSQL deadlock and serialization failures: safe to retry the whole transaction.
_RETRYABLE_SQLSTATES = {"40P01", "40001"}
_SEVERITY_RANK = {s: i for i, s in enumerate(Severity.values)}  # SEV1 = 0 = worst
_ALERT_UPDATE_FIELDS = [
    "status",
    "ends_at",
    "labels",
    "annotations",
    "generator_url",
    "severity",
    "incident",
    "last_received_at",
    "receive_count",
]
_INCIDENT_UPDATE_FIELDS = [
    "status",
    "severity",
    "started_at",
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


@dataclass
class IngestResult:
    receipt_id: int
    received: int
    incidents: list[int]
    opened: list[int] = field(default_factory=list)
    reopened: list[int] = field(default_factory=list)
    mitigated: list[int] = field(default_factory=list)

    def as_response(self) -> dict:
        return {
            "received": self.received,
            "incidents": self.incidents,
            "opened": self.opened,
            "reopened": self.reopened,
            "mitigated": self.mitigated,
            "receipt": self.receipt_id,
        }


def grouping_key_for(alert: ParsedAlert, payload: ParsedPayload) -> str:
    """Alertmanager's groupKey, or the configured label set (INCIDENT_GROUP_BY)."""
    group_by = settings.INCIDENT_GROUP_BY
    if not group_by:
        return payload.group_key
    return "labels:" + ",".join(f"{k}={alert.labels.get(k, '')}" for k in group_by)


def severity_for(alert_severity: str) -> str:
    mapping = {k.lower(): v for k, v in settings.INCIDENT_SEVERITY_MAP.items()}
    return mapping.get((alert_severity or "").lower(), settings.INCIDENT_DEFAULT_SEVERITY)


def _worse(a: str, b: str) -> str:
    return a if _SEVERITY_RANK.get(a, 99) <= _SEVERITY_RANK.get(b, 99) else b


def _merge_duplicates(alerts: list[ParsedAlert]) -> dict[tuple, ParsedAlert]:
    """One entry per (fingerprint, startsAt); resolved wins over firing."""
    merged: dict[tuple, ParsedAlert] = {}
    for alert in alerts:
        prev = merged.get(alert.key)
        if prev is None or (prev.status == "firing" and alert.status == "resolved"):
            merged[alert.key] = alert
    return merged


def _title(alert: ParsedAlert, payload: ParsedPayload) -> str:
    summary = alert.annotations.get("summary") or payload.common_annotations.get("summary")
    name = alert.alertname or "Alert"
    where = "/".join(v for v in (alert.labels.get("namespace"), alert.labels.get("lws")) if v)
    title = f"{name}: {summary}" if summary else (f"{name} on {where}" if where else name)
    return title[:300]


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


class _Batch:
    """The rows one delivery reads and writes, and the timeline it produces."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.events: list[TimelineEvent] = []
        self.dirty_incidents: dict[int, Incident] = {}
        self.result_opened: list[int] = []
        self.result_reopened: list[int] = []
        self.result_mitigated: list[int] = []
        self.fired: dict[int, list[dict]] = defaultdict(list)
        self.resolved: dict[int, list[dict]] = defaultdict(list)

    def touch(self, incident: Incident) -> None:
        incident.updated_at = self.now
        self.dirty_incidents[incident.pk] = incident


def _ingest_once(payload: ParsedPayload, meta: ReceiptMeta) -> IngestResult:
    now = timezone.now()
    batch = _Batch(now)
    window = timedelta(seconds=settings.INCIDENT_REOPEN_WINDOW_SECONDS)
    incoming = _merge_duplicates(payload.alerts)
    keys_of = {k: grouping_key_for(a, payload) for k, a in incoming.items()}
    group_keys = set(keys_of.values())

    # 1. The alerts we already know, plus recent orphans of these groups, locked.
    fps = {fp for fp, _ in incoming}
    starts = {s for _, s in incoming}
    known_q = Q(fingerprint__in=fps, starts_at__in=starts)
    orphan_q = Q(
        incident__isnull=True, grouping_key__in=group_keys, last_received_at__gte=now - window
    )
    rows = (
        list(Alert.objects.select_for_update().filter(known_q | orphan_q).order_by("pk"))
        if incoming
        else []
    )
    existing = {
        (a.fingerprint, a.starts_at): a for a in rows if (a.fingerprint, a.starts_at) in incoming
    }
    orphans_by_group: dict[str, list[Alert]] = defaultdict(list)
    for a in rows:
        if a.incident_id is None and (a.fingerprint, a.starts_at) not in incoming:
            orphans_by_group[a.grouping_key].append(a)

    # 2. The incidents concerned: those of known alerts, the open one per group, and
    #    recently resolved ones that a new firing may reopen. Locked.
    incident_ids = {a.incident_id for a in existing.values() if a.incident_id}
    inc_q = Q(pk__in=incident_ids) | Q(grouping_key__in=group_keys, status__in=OPEN_STATUSES)
    inc_q |= Q(
        grouping_key__in=group_keys, status=IncidentStatus.RESOLVED, resolved_at__gte=now - window
    )
    incidents = (
        {i.pk: i for i in Incident.objects.select_for_update().filter(inc_q).order_by("pk")}
        if incoming
        else {}
    )
    open_by_group: dict[str, Incident] = {}
    reopenable: dict[str, Incident] = {}
    for inc in incidents.values():
        if inc.status != IncidentStatus.RESOLVED:
            open_by_group[inc.grouping_key] = inc
        elif inc.grouping_key in group_keys:
            best = reopenable.get(inc.grouping_key)
            if best is None or inc.resolved_at > best.resolved_at:
                reopenable[inc.grouping_key] = inc

    # 3. Decide which groups need an incident: a firing delivery of an alert we do not
    #    already hold in a live incident. Reopen within the window, else open a new one.
    firing_groups: dict[str, ParsedAlert] = {}
    for key, alert in incoming.items():
        row = existing.get(key)
        if alert.status != "firing":
            continue
        held = (
            row is not None
            and row.incident_id in incidents
            and incidents[row.incident_id].status != IncidentStatus.RESOLVED
        )
        if row is not None and row.incident_id is not None and not held:
            continue  # re-sent alert of an incident a person already resolved: not new
        firing_groups.setdefault(keys_of[key], alert)
    to_create: list[Incident] = []
    for group, alert in firing_groups.items():
        if group in open_by_group:
            continue
        if group in reopenable:
            inc = reopenable.pop(group)
            _, event = apply_transition(
                inc,
                IncidentStatus.TRIGGERED,
                at=now,
                source="alertmanager",
                reason=f"Reopened: {alert.alertname or 'an alert'} fired again within "
                f"{settings.INCIDENT_REOPEN_WINDOW_SECONDS // 60} min of resolution.",
            )
            batch.events.append(event)
            batch.touch(inc)
            batch.result_reopened.append(inc.pk)
            open_by_group[group] = inc
            continue
        inc = Incident(
            title=_title(alert, payload),
            severity=severity_for(alert.labels.get("severity", "")),
            status=IncidentStatus.TRIGGERED,
            grouping_key=group,
            runbook=_runbook_slug(alert),
            namespace=alert.labels.get("namespace", "")[:253],
            group_labels=payload.group_labels
            if not settings.INCIDENT_GROUP_BY
            else {k: alert.labels.get(k, "") for k in settings.INCIDENT_GROUP_BY},
            started_at=alert.starts_at,
            triggered_at=now,
            last_alert_at=now,
        )
        to_create.append(inc)
        open_by_group[group] = inc
    if to_create:
        Incident.objects.bulk_create(to_create)  # a race here raises IntegrityError: retried
        for inc in to_create:
            incidents[inc.pk] = inc
            batch.result_opened.append(inc.pk)
            batch.events.append(
                TimelineEvent(
                    incident=inc,
                    kind=TimelineEventType.INCIDENT_OPENED,
                    occurred_at=now,
                    source="alertmanager",
                    message=f"Incident opened: {inc.title}",
                    payload={
                        "grouping_key": inc.grouping_key,
                        "receiver": payload.receiver,
                        "external_url": payload.external_url,
                    },
                )
            )

    # 4. Upsert the alerts and attach them (and waiting orphans) to their incident.
    new_rows, changed_rows = _upsert_alerts(
        incoming, existing, keys_of, open_by_group, incidents, batch, meta
    )
    for group, inc in open_by_group.items():
        for orphan in orphans_by_group.get(group, ()):
            orphan.incident_id = inc.pk
            changed_rows.append(orphan)
            batch.resolved[inc.pk].append(_alert_ref(orphan))
    if new_rows:
        Alert.objects.bulk_create(new_rows)  # a race here raises IntegrityError: retried
    if changed_rows:
        Alert.objects.bulk_update(changed_rows, _ALERT_UPDATE_FIELDS)

    # 5. Incidents whose alerts are all resolved are mitigated; firing again re-triggers.
    touched = {i for i in batch.fired} | {i for i in batch.resolved}
    _timeline_for_alerts(incidents, batch)
    _escalate_severity(incoming, keys_of, open_by_group, batch)
    if touched:
        firing_counts = dict(
            Alert.objects.filter(incident_id__in=touched, status=AlertStatus.FIRING)
            .values_list("incident_id")
            .annotate(n=Count("id"))
            .values_list("incident_id", "n")
        )
        for inc_id in sorted(touched):
            _settle_status(incidents[inc_id], firing_counts.get(inc_id, 0), batch)

    if batch.dirty_incidents:
        Incident.objects.bulk_update(list(batch.dirty_incidents.values()), _INCIDENT_UPDATE_FIELDS)
    if batch.events:
        TimelineEvent.objects.bulk_create(batch.events)
    all_ids = sorted({*touched, *batch.result_opened, *batch.result_reopened})
    receipt = WebhookReceipt.objects.create(
        received_at=now,
        source=meta.source,
        remote_addr=meta.remote_addr,
        user_agent=meta.user_agent[:300],
        body=meta.body,
        body_bytes=meta.body_bytes,
        outcome=ReceiptOutcome.REPLAYED if meta.replay_of_id else ReceiptOutcome.ACCEPTED,
        http_status=200,
        group_key=payload.group_key[:1000],
        alert_count=len(payload.alerts),
        incident_ids=all_ids,
        replay_of_id=meta.replay_of_id,
    )
    return IngestResult(
        receipt_id=receipt.pk,
        received=len(payload.alerts),
        incidents=all_ids,
        opened=batch.result_opened,
        reopened=batch.result_reopened,
        mitigated=batch.result_mitigated,
    )


def _runbook_slug(alert: ParsedAlert) -> str:
    slug = alert.labels.get("runbook", "").strip().lower()
    return slug[:100] if slug and all(c.isalnum() or c in "-_" for c in slug) else ""


def _alert_ref(alert: Alert | ParsedAlert) -> dict:
    labels = alert.labels
    return {
        "fingerprint": alert.fingerprint,
        "alertname": labels.get("alertname", ""),
        "pod": labels.get("pod", ""),
        "node": labels.get("node", ""),
        "starts_at": alert.starts_at.isoformat(),
    }


def _upsert_alerts(incoming, existing, keys_of, open_by_group, incidents, batch, meta):
    now = batch.now
    new_rows: list[Alert] = []
    changed_rows: list[Alert] = []
    for key, alert in incoming.items():
        group = keys_of[key]
        live = open_by_group.get(group)
        row = existing.get(key)
        if row is None:
            row = Alert(
                fingerprint=alert.fingerprint,
                starts_at=alert.starts_at,
                alertname=alert.alertname[:200],
                status=alert.status,
                severity=alert.labels.get("severity", "")[:32],
                labels=alert.labels,
                annotations=alert.annotations,
                ends_at=alert.ends_at,
                generator_url=alert.generator_url,
                grouping_key=group[:1000],
                incident=live,
                first_received_at=now,
                last_received_at=now,
            )
            new_rows.append(row)
            if live is not None:
                target = batch.fired if alert.status == "firing" else batch.resolved
                target[live.pk].append(_alert_ref(alert))
            continue
        was_firing = row.status == AlertStatus.FIRING
        if alert.status == "resolved" and was_firing:
            row.status = AlertStatus.RESOLVED
            row.ends_at = alert.ends_at or now
            if row.incident_id:
                batch.resolved[row.incident_id].append(_alert_ref(alert))
        elif alert.status == "resolved" and row.ends_at is None:
            row.ends_at = alert.ends_at
        elif alert.status == "firing" and was_firing and alert.ends_at and row.status == "firing":
            row.ends_at = alert.ends_at  # Alertmanager's moving resolve_timeout estimate
        if row.incident_id is None and live is not None:
            row.incident_id = live.pk  # an orphan (arrived resolved) joins its group
            (batch.fired if row.status == "firing" else batch.resolved)[live.pk].append(
                _alert_ref(alert)
            )
        row.labels = alert.labels
        row.annotations = alert.annotations
        row.generator_url = alert.generator_url or row.generator_url
        row.severity = alert.labels.get("severity", "")[:32]
        row.last_received_at = now
        row.receive_count += 1
        changed_rows.append(row)
    return new_rows, changed_rows


def _settle_status(inc: Incident, firing: int, batch: _Batch) -> None:
    now = batch.now
    if inc.pk in batch.fired:
        inc.last_alert_at = now
        batch.touch(inc)
    if firing == 0 and inc.status in (IncidentStatus.TRIGGERED, IncidentStatus.ACKNOWLEDGED):
        _, event = apply_transition(
            inc,
            IncidentStatus.MITIGATED,
            at=now,
            source="alertmanager",
            reason="All alerts resolved; the incident is mitigated until a person resolves it.",
        )
        batch.events.append(event)
        batch.touch(inc)
        batch.result_mitigated.append(inc.pk)
    elif firing > 0 and inc.status == IncidentStatus.MITIGATED:
        _, event = apply_transition(
            inc,
            retrigger_status(inc),
            at=now,
            source="alertmanager",
            reason="Alerts are firing again.",
        )
        batch.events.append(event)
        batch.touch(inc)


def _timeline_for_alerts(incidents: dict[int, Incident], batch: _Batch) -> None:
    """One event per incident per kind per delivery, listing the alerts, rather than a
    line per alert: a 100-pod storm stays readable."""
    for inc_id, refs in batch.fired.items():
        inc = incidents[inc_id]
        names = sorted({r["alertname"] for r in refs})
        batch.events.append(
            TimelineEvent(
                incident=inc,
                kind=TimelineEventType.ALERT_FIRED,
                occurred_at=batch.now,
                source="alertmanager",
                message=f"{len(refs)} alert{'s' if len(refs) != 1 else ''} firing: {', '.join(names)}",
                payload={"alerts": refs[:200], "count": len(refs)},
            )
        )
        batch.touch(inc)
    for inc_id, refs in batch.resolved.items():
        inc = incidents[inc_id]
        names = sorted({r["alertname"] for r in refs})
        batch.events.append(
            TimelineEvent(
                incident=inc,
                kind=TimelineEventType.ALERT_RESOLVED,
                occurred_at=batch.now,
                source="alertmanager",
                message=f"{len(refs)} alert{'s' if len(refs) != 1 else ''} resolved: {', '.join(names)}",
                payload={"alerts": refs[:200], "count": len(refs)},
            )
        )


def _escalate_severity(incoming, keys_of, open_by_group, batch: _Batch) -> None:
    """A more severe firing alert raises the incident's severity; nothing lowers it
    automatically (a commander decides that)."""
    for key, alert in incoming.items():
        inc = open_by_group.get(keys_of[key])
        if inc is None or alert.status != "firing":
            continue
        wanted = severity_for(alert.labels.get("severity", ""))
        if _worse(wanted, inc.severity) != inc.severity:
            batch.events.append(
                TimelineEvent(
                    incident=inc,
                    kind=TimelineEventType.SEVERITY_CHANGED,
                    occurred_at=batch.now,
                    source="alertmanager",
                    message=f"Severity raised {inc.severity} → {wanted} by {alert.alertname}.",
                    payload={"from": inc.severity, "to": wanted, "fingerprint": alert.fingerprint},
                )
            )
            inc.severity = wanted
            batch.touch(inc)
