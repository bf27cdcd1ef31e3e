"""In-memory decisions for one delivery: alert merges, status settling, timeline rows.

No queries here; ingestion.py reads the rows, hands them to a Batch and writes back
what the Batch changed, in bulk (ingestion_sql.py). Alert rows are plain AlertRow
objects, not model instances: building 50 of those cost more than writing them.
"""

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from django.conf import settings

from incidents.alertmanager import ParsedAlert
from incidents.grouping import alert_ref, is_worse, severity_for
from incidents.models import (
    AlertStatus,
    Incident,
    IncidentStatus,
    TimelineEvent,
    TimelineEventType,
)
from incidents.services.ingestion_sql import ALERT_UPDATE_COLUMNS
from incidents.transitions import apply_transition, retrigger_status

AlertKey = tuple[str, datetime]  # (fingerprint, startsAt): one alert occurrence


@dataclass(slots=True)
class AlertRow:
    """An incidents_alert row as ingestion reads and writes it (id None: not stored yet).
    A stored row is read (ingestion_sql.ALERT_READ_COLUMNS, in this order) without
    alertname and first_received_at, which never change."""

    id: int | None
    fingerprint: str
    starts_at: datetime
    status: str
    severity: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ends_at: datetime | None
    generator_url: str
    grouping_key: str
    incident_id: int | None
    last_received_at: datetime
    receive_count: int
    alertname: str = ""
    first_received_at: datetime | None = None

    def inserted(self) -> dict[str, Any]:
        """The new row's columns (but id)."""
        return {name: getattr(self, name) for name in _NEW_ROW_COLUMNS}

    def updated(self) -> dict[str, Any]:
        """The stored row's id and the columns a delivery writes."""
        return {name: getattr(self, name) for name in ("id", *ALERT_UPDATE_COLUMNS)}


_NEW_ROW_COLUMNS = tuple(f.name for f in fields(AlertRow) if f.name != "id")


def alerts_digest(alerts: Iterable[ParsedAlert], fired: set[AlertKey]) -> str:
    """What a notification says about its (merged) alerts, as 32 hex digits: two
    notifications with the same digest have the same effect on the alerts they carry,
    receive bookkeeping aside. The alert keys are unique, so sorting never compares
    the label dicts."""
    items = sorted(
        (
            a.fingerprint,
            a.starts_at.isoformat(),
            a.status,
            a.key in fired,
            a.ends_at.isoformat() if a.ends_at else "",
            a.generator_url,
            a.labels,
            a.annotations,
        )
        for a in alerts
    )
    text = json.dumps(items, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class Batch:
    def __init__(self, now: datetime) -> None:
        self.now = now
        self.events: list[TimelineEvent] = []
        self.dirty_incidents: dict[int, Incident] = {}
        self.opened: list[int] = []
        self.reopened: list[int] = []
        self.mitigated: list[int] = []
        self.fired: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self.resolved: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self.new_alerts: list[AlertRow] = []
        # Stored rows this delivery writes (each wholly: content and receive bookkeeping).
        self.stored_alerts: dict[int, AlertRow] = {}
        # Incidents that hold a firing alert of this delivery: still firing once written.
        self.firing: set[int] = set()
        # Severity label -> level, once per label (a body has one or two labels).
        self._levels: dict[str, str] = {}
        # Incidents this delivery opened, as inserted (ingestion._written): written again
        # only if something changed since.
        self.inserted: dict[int, tuple[object, ...]] = {}

    def touch(self, incident: Incident) -> None:
        incident.updated_at = self.now
        self.mark(incident)

    def mark(self, incident: Incident) -> None:
        """To be written back, without counting as an update a person would see."""
        if incident.pk is not None:
            self.dirty_incidents[incident.pk] = incident

    def event(self, incident: Incident, kind: str, message: str, payload: dict[str, Any]) -> None:
        self.events.append(
            TimelineEvent(
                incident=incident,
                kind=kind,
                occurred_at=self.now,
                source="alertmanager",
                message=message,
                payload=payload,
            )
        )

    @property
    def touched(self) -> set[int]:
        return set(self.fired) | set(self.resolved)

    # --- decisions ----------------------------------------------------------------
    def reopen(self, incident: Incident, alert: ParsedAlert) -> None:
        minutes = settings.INCIDENT_REOPEN_WINDOW_SECONDS // 60
        _, event = apply_transition(
            incident,
            IncidentStatus.TRIGGERED,
            at=self.now,
            source="alertmanager",
            reason=f"Reopened: {alert.alertname or 'an alert'} fired again within "
            f"{minutes} min of resolution.",
        )
        self.events.append(event)
        self.touch(incident)
        self.reopened.append(incident.pk)

    def upsert_alert(
        self, alert: ParsedAlert, row: AlertRow | None, group: str, live: Incident | None
    ) -> None:
        """Merge one delivered alert into its row (new or stored)."""
        now = self.now
        if row is None:
            row = AlertRow(
                id=None,
                fingerprint=alert.fingerprint,
                starts_at=alert.starts_at,
                alertname=alert.alertname[:200],
                status=alert.status,
                severity=alert.labels.get("severity", "")[:32],
                labels=alert.labels,
                annotations=alert.annotations,
                ends_at=alert.ends_at,
                generator_url=alert.generator_url,
                grouping_key=group,
                incident_id=live.pk if live is not None else None,
                first_received_at=now,
                last_received_at=now,
                receive_count=1,
            )
            self.new_alerts.append(row)
            if live is not None:
                (self.fired if alert.status == "firing" else self.resolved)[live.pk].append(
                    alert_ref(alert)
                )
                if alert.status == "firing":
                    self.firing.add(live.pk)
            return
        if alert.status == "resolved":
            if row.status == AlertStatus.FIRING:
                row.status = AlertStatus.RESOLVED
                row.ends_at = alert.ends_at or now
                if row.incident_id:
                    self.resolved[row.incident_id].append(alert_ref(alert))
            elif row.ends_at is None:
                row.ends_at = alert.ends_at
        elif row.status == AlertStatus.FIRING and alert.ends_at:
            row.ends_at = alert.ends_at  # Alertmanager's moving resolve_timeout estimate
        if row.incident_id is None and live is not None:
            row.incident_id = live.pk  # arrived resolved earlier; now its group has one
            (self.fired if row.status == AlertStatus.FIRING else self.resolved)[live.pk].append(
                alert_ref(alert)
            )
        row.labels = alert.labels
        row.annotations = alert.annotations
        row.generator_url = alert.generator_url or row.generator_url
        row.severity = alert.labels.get("severity", "")[:32]
        row.last_received_at = now
        row.receive_count += 1
        assert row.id is not None
        self.stored_alerts[row.id] = row
        if row.status == AlertStatus.FIRING and row.incident_id:
            self.firing.add(row.incident_id)

    def adopt_orphan(self, orphan: AlertRow, incident: Incident) -> None:
        orphan.incident_id = incident.pk
        assert orphan.id is not None
        self.stored_alerts[orphan.id] = orphan
        self.resolved[incident.pk].append(alert_ref(orphan))

    def escalate(self, incident: Incident, alert: ParsedAlert) -> None:
        """A more severe firing alert raises the severity; nothing lowers it on its own."""
        label = alert.labels.get("severity", "")
        wanted = self._levels.get(label) or self._levels.setdefault(label, severity_for(label))
        if not is_worse(wanted, incident.severity):
            return
        self.event(
            incident,
            TimelineEventType.SEVERITY_CHANGED,
            f"Severity raised {incident.severity} → {wanted} by {alert.alertname}.",
            {"from": incident.severity, "to": wanted, "fingerprint": alert.fingerprint},
        )
        incident.severity = wanted
        self.touch(incident)

    def alert_events(self, incidents: dict[int, Incident]) -> None:
        """One event per incident and kind per delivery, listing the alerts, rather than
        a line per alert: a 100-pod storm stays readable."""
        for kind, verb, refs_by_incident in (
            (TimelineEventType.ALERT_FIRED, "firing", self.fired),
            (TimelineEventType.ALERT_RESOLVED, "resolved", self.resolved),
        ):
            for inc_id, refs in refs_by_incident.items():
                names = ", ".join(sorted({r["alertname"] for r in refs}))
                plural = "s" if len(refs) != 1 else ""
                self.event(
                    incidents[inc_id],
                    kind,
                    f"{len(refs)} alert{plural} {verb}: {names}",
                    {"alerts": refs[:200], "count": len(refs)},
                )
                if kind == TimelineEventType.ALERT_FIRED:
                    incidents[inc_id].last_alert_at = self.now
                    self.touch(incidents[inc_id])

    def settle(self, incident: Incident, firing: int) -> None:
        """All alerts resolved -> mitigated; firing again after mitigation -> back."""
        to: str
        if firing == 0 and incident.status in (
            IncidentStatus.TRIGGERED,
            IncidentStatus.ACKNOWLEDGED,
        ):
            to = IncidentStatus.MITIGATED
            reason = "All alerts resolved; mitigated until a person resolves it."
            self.mitigated.append(incident.pk)
        elif firing > 0 and incident.status == IncidentStatus.MITIGATED:
            to = retrigger_status(incident)
            reason = "Alerts are firing again."
        else:
            return
        _, event = apply_transition(incident, to, at=self.now, source="alertmanager", reason=reason)
        self.events.append(event)
        self.touch(incident)
