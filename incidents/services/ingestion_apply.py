"""The full path of one notification: lock and read what it concerns, decide in memory
(ingest_batch.Batch), write back in bulk (ingestion_sql). Run inside alerts_ingest's
transaction when the notification is not an unchanged repeat.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from incidents.alertmanager import ParsedAlert, ParsedPayload
from incidents.grouping import (
    group_labels_for,
    grouping_key_for,
    is_worse,
    runbook_slug,
    severity_for,
    title_for,
)
from incidents.models import Incident, IncidentStatus, TimelineEventType
from incidents.services import ingestion_sql
from incidents.services.ingest_batch import AlertKey, AlertRow, Batch, alerts_digest
from incidents.services.timeline import timeline_announce


@dataclass
class Groups:
    """The body's alerts by group: each group's digest, and the repeat fast path's specs
    (ingestion_sql.repeat_apply)."""

    keys_of: dict[AlertKey, str]
    digests: dict[str, str]
    specs: list[dict[str, object]]


def groups_of(
    payload: ParsedPayload, incoming: dict[AlertKey, ParsedAlert], fired: set[AlertKey]
) -> Groups:
    keys_of = {key: grouping_key_for(alert, payload) for key, alert in incoming.items()}
    members: dict[str, list[ParsedAlert]] = defaultdict(list)
    for key, alert in incoming.items():
        members[keys_of[key]].append(alert)
    levels: dict[str, str] = {}  # severity label -> level (a 50-alert body has one or two)
    digests, specs = {}, []
    for group, alerts in members.items():
        digests[group] = alerts_digest(alerts, fired)
        worst = ""  # the most severe level a firing alert of the group escalates to
        for alert in alerts:
            if alert.key not in fired:
                continue
            label = alert.labels.get("severity", "")
            level = levels.get(label) or levels.setdefault(label, severity_for(label))
            if not worst or is_worse(level, worst):
                worst = level
        specs.append(
            {"grouping_key": group, "digest": digests[group], "alerts": len(alerts),
             "severity": worst or "~"}  # "~" sorts after every level: nothing escalates
        )  # fmt: skip
    return Groups(keys_of, digests, specs)


@dataclass
class _Loaded:
    existing: dict[AlertKey, AlertRow]
    orphans: dict[str, list[AlertRow]]
    incidents: dict[int, Incident]
    open_by_group: dict[str, Incident]
    reopenable: dict[str, Incident]


def _load(incoming: dict[AlertKey, ParsedAlert], group_keys: set[str], now: datetime) -> _Loaded:
    """Two locking reads: the alerts concerned (plus recent orphans of these groups),
    then the incidents concerned. Rows are locked in primary-key order."""
    cutoff = now - timedelta(seconds=settings.INCIDENT_REOPEN_WINDOW_SECONDS)
    starts = [s for _, s in incoming]
    rows = ingestion_sql.alerts_for_update(
        fingerprints=[fp for fp, _ in incoming],
        first=min(starts),
        last=max(starts),
        groups=sorted(group_keys),
        orphans_since=cutoff,
    )
    existing: dict[AlertKey, AlertRow] = {}
    orphans: dict[str, list[AlertRow]] = defaultdict(list)
    for values in rows:
        row = AlertRow(*values)
        key = (row.fingerprint, row.starts_at)
        if key in incoming:
            existing[key] = row
        elif (
            row.incident_id is None
            and row.grouping_key in group_keys
            and row.last_received_at >= cutoff
        ):
            row.labels = ingestion_sql.json_value(row.labels)
            row.annotations = ingestion_sql.json_value(row.annotations)
            orphans[row.grouping_key].append(row)

    held = sorted({a.incident_id for a in existing.values() if a.incident_id})
    found = ingestion_sql.incidents_for_update(
        ids=held, groups=sorted(group_keys), resolved_since=cutoff
    )
    incidents = {i.pk: i for i in found}
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
    wanted: dict[str, ParsedAlert],
    payload: ParsedPayload,
    loaded: _Loaded,
    batch: Batch,
    digests: dict[str, str],
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
            alert_digest=digests.get(group, ""),
            last_notified_at=batch.now,
        )
        to_create.append(inc)
        loaded.open_by_group[group] = inc
    if not to_create:
        return
    # A concurrent delivery opening the same group loses on the partial unique
    # constraint here; alerts_ingest retries and then finds the winner's incident.
    ingestion_sql.models_insert(to_create)
    for inc in to_create:
        loaded.incidents[inc.pk] = inc
        batch.opened.append(inc.pk)
        batch.inserted[inc.pk] = _written(inc)
        batch.event(
            inc,
            TimelineEventType.INCIDENT_OPENED,
            f"Incident opened: {inc.title}",
            {"grouping_key": inc.grouping_key, "receiver": payload.receiver,
             "external_url": payload.external_url},
        )  # fmt: skip


def _written(incident: Incident) -> tuple[object, ...]:
    """What an update of `incident` would write, but for updated_at."""
    return tuple(
        getattr(incident, name)
        for name in ingestion_sql.INCIDENT_UPDATE_COLUMNS
        if name != "updated_at"
    )


def notification_apply(
    payload: ParsedPayload,
    incoming: dict[AlertKey, ParsedAlert],
    fired: set[AlertKey],
    groups: Groups,
    batch: Batch,
) -> None:
    keys_of = groups.keys_of
    loaded = _load(incoming, set(keys_of.values()), batch.now)
    wanted = _groups_needing_incident(incoming, fired, keys_of, loaded)
    _open_incidents(wanted, payload, loaded, batch, groups.digests)
    for key, alert in incoming.items():
        live = loaded.open_by_group.get(keys_of[key])
        batch.upsert_alert(alert, loaded.existing.get(key), keys_of[key], live)
        if live is not None and key in fired:
            batch.escalate(live, alert)
    for group, inc in loaded.open_by_group.items():
        for orphan in loaded.orphans.get(group, ()):
            batch.adopt_orphan(orphan, inc)
    ingestion_sql.alerts_insert([row.inserted() for row in batch.new_alerts])
    ingestion_sql.alerts_update([row.updated() for row in batch.stored_alerts.values()])
    batch.alert_events(loaded.incidents)
    _settle(batch, loaded)
    _stamp(batch, loaded, groups.digests)
    ingestion_sql.incidents_update(
        [
            inc
            for pk, inc in batch.dirty_incidents.items()
            if pk not in batch.inserted or _written(inc) != batch.inserted[pk]
        ]
    )
    if batch.events:
        ingestion_sql.models_insert(batch.events)
        timeline_announce(batch.events)


def _stamp(batch: Batch, loaded: _Loaded, digests: dict[str, str]) -> None:
    """Each group's live incident: the digest of this notification's alerts of the group
    and when it came (the repeat fast path's marks). An incident of another group whose
    alerts this delivery wrote (an alert routed to two groups): no digest."""
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


def _settle(batch: Batch, loaded: _Loaded) -> None:
    """Counts firing alerts only for incidents this delivery did not leave firing."""
    touched = batch.touched
    counts = ingestion_sql.firing_counts(sorted(touched - batch.firing))
    for inc_id in sorted(touched):
        firing = 1 if inc_id in batch.firing else counts.get(inc_id, 0)
        batch.settle(loaded.incidents[inc_id], firing)
