"""Stage 5, decide: what one delivery changes, in memory. No queries here.

apply.notification_apply reads the rows (write), hands them here and writes back what
was decided, in bulk. The functions below come in the order it calls them: sort what was
read, open or reopen the groups' incidents, merge the alerts into their rows, settle
each incident's status.

Status moves go through incidents.transitions (the state machine the buttons use too):
all alerts resolved mitigates an incident, firing again after mitigation puts it back,
a group firing again within INCIDENT_REOPEN_WINDOW_SECONDS of its resolution reopens it.
An alert that arrives already resolved never opens an incident; it waits unattached
("orphan") and joins its group's incident if one is open, or opens later within the
reopen window.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings

from console.texts import Msg, msg
from incidents.ingest.group import AlertKey, Groups
from incidents.ingest.parse import ParsedAlert, ParsedPayload
from incidents.ingest.write import INCIDENT_UPDATE_COLUMNS, AlertRow, json_value
from incidents.models import (
    AlertStatus,
    Incident,
    IncidentStatus,
    TimelineEvent,
    TimelineEventType,
)
from incidents.rules import RUNBOOK_SLUG_RE, is_worse
from incidents.texts import event_say
from incidents.transitions import apply_transition, retrigger_status


@dataclass
class Loaded:
    """What the two locking reads found, sorted for the decisions."""

    existing: dict[AlertKey, AlertRow]  # the body's alerts already stored
    orphans: dict[str, list[AlertRow]]  # recent unattached alerts, by group
    incidents: dict[int, Incident]
    open_by_group: dict[str, Incident]
    reopenable: dict[str, Incident]  # resolved within the reopen window, by group


def loaded(rows: list[AlertRow], found: list[Incident], groups: Groups, since: datetime) -> Loaded:
    group_keys = groups.digests.keys()
    existing: dict[AlertKey, AlertRow] = {}
    orphans: dict[str, list[AlertRow]] = defaultdict(list)
    for row in rows:
        key = (row.fingerprint, row.starts_at)
        if key in groups.incoming:
            existing[key] = row
        elif (
            row.incident_id is None
            and row.grouping_key in group_keys
            and row.last_received_at >= since
        ):
            row.labels = json_value(row.labels)
            row.annotations = json_value(row.annotations)
            orphans[row.grouping_key].append(row)
    incidents = {i.pk: i for i in found}
    open_by_group: dict[str, Incident] = {}
    reopenable: dict[str, Incident] = {}
    for inc in incidents.values():
        if inc.status != IncidentStatus.RESOLVED:
            open_by_group[inc.grouping_key] = inc
        elif inc.grouping_key in group_keys and inc.resolved_at and inc.resolved_at >= since:
            best = reopenable.get(inc.grouping_key)
            if best is None or best.resolved_at is None or inc.resolved_at > best.resolved_at:
                reopenable[inc.grouping_key] = inc
    return Loaded(existing, orphans, incidents, open_by_group, reopenable)


# --- open: the groups that need an incident -------------------------------------------
def incidents_to_open(
    payload: ParsedPayload, groups: Groups, loaded: Loaded, batch: "Batch"
) -> list[Incident]:
    """Reopen what can be reopened; the new incidents, unsaved. A group needs one when a
    firing alert of it is held by no live incident; the first such alert names it."""
    wanted: dict[str, ParsedAlert] = {}
    for key, alert in groups.incoming.items():
        if key not in groups.fired:
            continue
        row = loaded.existing.get(key)
        if row is not None and row.incident_id is not None:
            inc = loaded.incidents.get(row.incident_id)
            if inc is None or inc.status == IncidentStatus.RESOLVED:
                # A re-sent alert of an incident a person has already resolved is not
                # news: it opens nothing.
                continue
            if inc.grouping_key != groups.keys_of[key]:
                # Sent under a second groupKey too (routes with `continue: true`): the
                # alert stays with its incident, so a new one here would stay empty.
                continue
        wanted.setdefault(groups.keys_of[key], alert)
    new: list[Incident] = []
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
            severity=groups.levels[alert.labels.get("severity", "")],
            status=IncidentStatus.TRIGGERED,
            grouping_key=group,
            runbook=runbook_slug(alert),
            namespace=alert.labels.get("namespace", "")[:253],
            group_labels=group_labels_for(alert, payload),
            started_at=alert.starts_at,
            triggered_at=batch.now,
            last_alert_at=batch.now,
            alert_digest=groups.digests.get(group, ""),
            last_notified_at=batch.now,
        )
        new.append(inc)
        loaded.open_by_group[group] = inc
    return new


def title_for(alert: ParsedAlert, payload: ParsedPayload) -> str:
    summary = alert.annotations.get("summary") or payload.common_annotations.get("summary")
    name = alert.alertname or "Alert"
    where = "/".join(v for v in (alert.labels.get("namespace"), alert.labels.get("lws")) if v)
    if summary:
        # Summaries often name the alert already; don't say it twice.
        return (summary if name.lower() in summary.lower() else f"{name}: {summary}")[:300]
    return (f"{name} on {where}" if where else name)[:300]


def runbook_slug(alert: ParsedAlert) -> str:
    """The alert's `runbook` label, when it is a runbook name ("" otherwise)."""
    slug = alert.labels.get("runbook", "").strip().lower()
    return slug if RUNBOOK_SLUG_RE.fullmatch(slug) else ""


def group_labels_for(alert: ParsedAlert, payload: ParsedPayload) -> dict[str, str]:
    if settings.INCIDENT_GROUP_BY:
        return {k: alert.labels.get(k, "") for k in settings.INCIDENT_GROUP_BY}
    return dict(payload.group_labels)


def alert_ref(alert: ParsedAlert | AlertRow) -> dict[str, str]:
    """How the timeline names an alert."""
    labels = alert.labels
    return {
        "fingerprint": alert.fingerprint,
        "alertname": labels.get("alertname", ""),
        "pod": labels.get("pod", ""),
        "node": labels.get("node", ""),
        "starts_at": alert.starts_at.isoformat(),
    }


# --- merge: the alerts into their rows, once the new incidents have ids ------------------
def alerts_merge(
    payload: ParsedPayload, groups: Groups, loaded: Loaded, batch: "Batch", new: list[Incident]
) -> None:
    for inc in new:
        loaded.incidents[inc.pk] = inc
        batch.opened.append(inc.pk)
        batch.inserted[inc.pk] = _written(inc)
        batch.event(
            inc,
            TimelineEventType.INCIDENT_OPENED,
            msg("incidents.opened", title=inc.title),
            {"grouping_key": inc.grouping_key, "receiver": payload.receiver,
             "external_url": payload.external_url},
        )  # fmt: skip
    for key, alert in groups.incoming.items():
        group = groups.keys_of[key]
        live = loaded.open_by_group.get(group)
        batch.upsert_alert(alert, loaded.existing.get(key), group, live)
        if live is not None and key in groups.fired:
            batch.escalate(live, alert, groups.levels[alert.labels.get("severity", "")])
    for group, inc in loaded.open_by_group.items():
        for orphan in loaded.orphans.get(group, ()):
            batch.adopt_orphan(orphan, inc)
    batch.alert_events(loaded.incidents)


# --- settle: each touched incident's status, and the repeat fast path's marks ------------
def incidents_settle(
    batch: "Batch", loaded: Loaded, counts: dict[int, int], digests: dict[str, str]
) -> list[Incident]:
    """`counts`: the firing alerts of the touched incidents this delivery did not leave
    firing. Returns the incidents to write back."""
    for inc_id in sorted(batch.touched):
        firing = 1 if inc_id in batch.firing else counts.get(inc_id, 0)
        batch.settle(loaded.incidents[inc_id], firing)
    # Each group's live incident: the digest of this notification's alerts of the group
    # and when it came. An incident of another group whose alerts this delivery wrote (an
    # alert routed to two groups): no digest.
    stamped = set()
    for group, digest in digests.items():
        inc = loaded.open_by_group.get(group)
        if inc is not None:
            inc.alert_digest, inc.last_notified_at = digest, batch.now
            batch.mark(inc)
            stamped.add(inc.pk)
    for row in (*batch.new_alerts, *batch.stored_alerts.values()):
        if row.incident_id is not None and row.incident_id not in stamped:
            inc = loaded.incidents[row.incident_id]
            if inc.alert_digest:
                inc.alert_digest = ""
                batch.mark(inc)
    # An incident opened here is written again only if something changed since.
    return [
        inc
        for pk, inc in batch.dirty_incidents.items()
        if pk not in batch.inserted or _written(inc) != batch.inserted[pk]
    ]


def _written(incident: Incident) -> tuple[object, ...]:
    """What an update of `incident` would write, but for updated_at."""
    return tuple(
        getattr(incident, name) for name in INCIDENT_UPDATE_COLUMNS if name != "updated_at"
    )


@dataclass
class Batch:
    """One delivery's changes: alert rows, incidents to write back, timeline entries."""

    now: datetime
    events: list[TimelineEvent] = field(default_factory=list)
    dirty_incidents: dict[int, Incident] = field(default_factory=dict)
    opened: list[int] = field(default_factory=list)
    reopened: list[int] = field(default_factory=list)
    mitigated: list[int] = field(default_factory=list)
    # Incident -> the alerts this delivery fired or resolved in it (alert_ref).
    fired: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    resolved: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    new_alerts: list[AlertRow] = field(default_factory=list)
    # Stored rows this delivery writes (each wholly: content and receive bookkeeping).
    stored_alerts: dict[int, AlertRow] = field(default_factory=dict)
    # Incidents that hold a firing alert of this delivery: still firing once written.
    firing: set[int] = field(default_factory=set)
    # Incidents this delivery opened, as inserted (_written).
    inserted: dict[int, tuple[object, ...]] = field(default_factory=dict)

    def touch(self, incident: Incident) -> None:
        incident.updated_at = self.now
        self.mark(incident)

    def mark(self, incident: Incident) -> None:
        """To be written back, without counting as an update a person would see."""
        if incident.pk is not None:
            self.dirty_incidents[incident.pk] = incident

    def event(self, incident: Incident, kind: str, message: Msg, payload: dict[str, Any]) -> None:
        event = TimelineEvent(
            incident=incident, kind=kind, occurred_at=self.now, source="alertmanager",
            payload=payload,
        )  # fmt: skip
        event_say(event, message)
        self.events.append(event)

    @property
    def touched(self) -> set[int]:
        return set(self.fired) | set(self.resolved)

    def reopen(self, incident: Incident, alert: ParsedAlert) -> None:
        minutes = settings.INCIDENT_REOPEN_WINDOW_SECONDS // 60
        _, event = apply_transition(
            incident,
            IncidentStatus.TRIGGERED,
            at=self.now,
            source="alertmanager",
            reason=msg(
                "incidents.status.reopened_by_alert",
                alert=alert.alertname or msg("incidents.word.an_alert"),
                minutes=minutes,
            ),
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

    def escalate(self, incident: Incident, alert: ParsedAlert, wanted: str) -> None:
        """A more severe firing alert raises the severity; nothing lowers it on its own."""
        if not is_worse(wanted, incident.severity):
            return
        self.event(
            incident,
            TimelineEventType.SEVERITY_CHANGED,
            msg(
                "incidents.severity.raised",
                to=wanted,
                alert=alert.alertname,
                **{"from": incident.severity},
            ),
            {"from": incident.severity, "to": wanted, "fingerprint": alert.fingerprint},
        )
        incident.severity = wanted
        self.touch(incident)

    def alert_events(self, incidents: dict[int, Incident]) -> None:
        """One event per incident and kind per delivery, listing the alerts, rather than
        a line per alert: a 100-pod storm stays readable."""
        for kind, key, refs_by_incident in (
            (TimelineEventType.ALERT_FIRED, "incidents.alerts.firing", self.fired),
            (TimelineEventType.ALERT_RESOLVED, "incidents.alerts.resolved", self.resolved),
        ):
            for inc_id, refs in refs_by_incident.items():
                names = ", ".join(sorted({r["alertname"] for r in refs}))
                self.event(
                    incidents[inc_id],
                    kind,
                    msg(key, count=len(refs), names=names),
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
            reason = msg("incidents.status.all_resolved")
            self.mitigated.append(incident.pk)
        elif firing > 0 and incident.status == IncidentStatus.MITIGATED:
            to = retrigger_status(incident)
            reason = msg("incidents.status.firing_again")
        else:
            return
        _, event = apply_transition(incident, to, at=self.now, source="alertmanager", reason=reason)
        self.events.append(event)
        self.touch(incident)
