"""Reconcile the console's alerts with Alertmanager's own view.

Alertmanager sends no resolved notification for an alert that was silenced or inhibited
when it resolved, and drops ended alerts after its resolve_timeout; the webhook alone
would leave such an alert firing here for ever. So the console asks Alertmanager
(`GET /api/v2/alerts`, every replica) about the firing alerts of open incidents and
records, per alert, what it says (firing, silenced, inhibited, resolved, not listed).
An alert it reports resolved, or that no replica that answered has listed for
ALERTMANAGER_RECONCILE_GRACE_SECONDS, ends as a resolved notification would end it; an
incident whose alerts have all ended moves to mitigated through ingest's own decision
(incidents.ingest.decide.Batch.settle). An alert the reconcile ended that Alertmanager
lists again is firing again, and its incident goes back the same way.

Alertmanager is asked first, outside any transaction; then each incident is written in
a transaction of its own, its alert rows locked before the incident row, in primary-key
order, as ingest locks them. When no replica can be asked, nothing changes but the
record of having tried (am_asked_at, am_error), which the incident page shows.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from console.texts import Msg, msg
from incidents.alertmanager_view import selectors
from incidents.alertmanager_view.client import View, view_fetch
from incidents.alertmanager_view.decide import ENDED, Observed, may_end, observe
from incidents.ingest.decide import Batch
from incidents.models import (
    Alert,
    AlertmanagerState,
    AlertStatus,
    Incident,
    TimelineEvent,
    TimelineEventType,
)
from incidents.selectors import incident_for_update
from incidents.timeline_signal import timeline_announce

log = logging.getLogger(__name__)
S = AlertmanagerState
TASK = "incidents.tasks.alertmanager_reconcile"
NAMED = 5  # alert names in a timeline line; the rest are counted
_ERROR_CHARS = 1000
_AM_FIELDS = [
    "am_state",
    "am_silenced_by",
    "am_inhibited_by",
    "am_asked_at",
    "am_checked_at",
    "am_seen_at",
    "am_error",
]


@dataclass
class ReconcileResult:
    asked: bool = False  # whether Alertmanager was asked (there was something to ask)
    answered: bool = False  # whether a replica answered
    checked: int = 0
    ended: int = 0
    revived: int = 0
    mitigated: list[int] = field(default_factory=list)
    error: str = ""


def alertmanager_reconcile(*, incident_id: int | None = None) -> ReconcileResult:
    """Ask Alertmanager about the open incidents' firing alerts (or one incident's) and
    record what it says. Never inside a transaction: it calls Alertmanager first."""
    result = ReconcileResult()
    found = selectors.candidates(incident_id=incident_id)
    if not found:
        return result
    result.asked = True
    view = view_fetch()
    result.error = view.error_text()[:_ERROR_CHARS]
    if not view.usable:
        # Nothing changes; the page says when it last reconciled and that it could not ask.
        Alert.objects.filter(pk__in=[c.id for c in found]).update(
            am_asked_at=view.asked_at, am_error=result.error
        )
        log.warning("alertmanager reconcile: no replica answered: %s", result.error)
        return result
    result.answered = True
    by_incident: dict[int, list[selectors.Candidate]] = defaultdict(list)
    for c in found:
        by_incident[c.incident_id].append(c)
    for inc_id in sorted(by_incident):
        _incident_apply(inc_id, by_incident[inc_id], view, result)
    return result


@transaction.atomic
def _incident_apply(
    incident_id: int, found: list[selectors.Candidate], view: View, result: ReconcileResult
) -> None:
    # Alerts first, then the incident: ingest's lock order. Re-read under the lock: a
    # delivery may have resolved or moved them since they were read.
    rows = list(
        Alert.objects.select_for_update()
        .filter(pk__in=[c.id for c in found], incident_id=incident_id)
        .order_by("pk")
    )
    incident = incident_for_update(incident_id=incident_id)
    grace = timedelta(seconds=settings.ALERTMANAGER_RECONCILE_GRACE_SECONDS)
    ended: dict[str, list[Alert]] = defaultdict(list)
    revived: list[Alert] = []
    for alert in rows:
        seen = observe(view, fingerprint=alert.fingerprint, starts_at=alert.starts_at)
        evidence = max((t for t in (alert.am_seen_at, alert.last_received_at) if t), default=None)
        was = alert.am_state
        _record(alert, seen, view)
        if alert.status == AlertStatus.FIRING:
            result.checked += 1
            if may_end(seen, asked_at=view.asked_at, last_evidence=evidence, grace=grace):
                alert.status = AlertStatus.RESOLVED
                alert.ends_at = seen.ends_at or view.asked_at
                ended[seen.state].append(alert)
        elif was in ENDED and not seen.ended and alert.last_received_at < view.asked_at:
            # Ended by an earlier reconcile (not by a delivery since), and listed alive
            # again: the same episode, so it fires again.
            alert.status, alert.ends_at = AlertStatus.FIRING, None
            revived.append(alert)
    Alert.objects.bulk_update(rows, [*_AM_FIELDS, "status", "ends_at"])
    if not (ended or revived):
        return
    batch = Batch(timezone.now())
    for state, alerts in sorted(ended.items()):
        kind, text = TimelineEventType.ALERT_RESOLVED, _ended_text(state, alerts)
        batch.event(incident, kind, text, _payload(alerts, view, state))
    if revived:
        text = msg("incidents.am.again", what=_what(revived))
        batch.event(
            incident, TimelineEventType.ALERT_FIRED, text, _payload(revived, view, S.FIRING)
        )
    firing = Alert.objects.filter(incident_id=incident_id, status=AlertStatus.FIRING).count()
    if (ended and not firing) or (revived and firing):
        batch.settle(incident, firing)  # all ended -> mitigated; firing again -> back
    incident.save()
    events = TimelineEvent.objects.bulk_create(batch.events)
    timeline_announce(events)
    result.ended += sum(len(a) for a in ended.values())
    result.revived += len(revived)
    result.mitigated += batch.mitigated


def _record(alert: Alert, seen: Observed, view: View) -> None:
    alert.am_state = seen.state
    alert.am_silenced_by = list(seen.silenced_by)
    alert.am_inhibited_by = list(seen.inhibited_by)
    alert.am_asked_at = alert.am_checked_at = view.asked_at
    alert.am_error = view.error_text()[:_ERROR_CHARS]
    if seen.listed:
        alert.am_seen_at = view.asked_at


def _what(alerts: list[Alert]) -> str | Msg:
    """The alerts a line names: "GpuXid", or "3 alerts (A, B and 1 more)"."""
    names = sorted({a.alertname for a in alerts if a.alertname})
    shown: str | Msg = ", ".join(names[:NAMED])
    if len(names) > NAMED:
        shown = msg("incidents.am.names_more", names=shown, more=len(names) - NAMED)
    if not names:
        shown = msg("incidents.word.alert")
    if len(alerts) == 1:
        return shown
    return msg("incidents.am.alerts", count=len(alerts), names=shown)


def _ended_text(state: str, alerts: list[Alert]) -> Msg:
    if state == S.RESOLVED:
        return msg("incidents.am.resolved", what=_what(alerts))
    return msg("incidents.am.gone", what=_what(alerts))


def _payload(alerts: list[Alert], view: View, state: str) -> dict[str, Any]:
    refs = [
        {
            "fingerprint": a.fingerprint,
            "alertname": a.alertname,
            "pod": str((a.labels or {}).get("pod", "")),
            "node": str((a.labels or {}).get("node", "")),
            "starts_at": a.starts_at.isoformat(),
        }
        for a in alerts[:200]
    ]
    return {
        "alerts": refs,
        "count": len(alerts),
        "reconciled": True,
        "alertmanager_state": state,
        "asked_at": view.asked_at.isoformat(),
        "replicas": view.answered,
    }


def incident_reconcile_request(*, incident: Incident) -> bool:
    """Queue a reconcile of one incident when its page is opened: only when it has
    firing alerts, at most once per ALERTMANAGER_RECONCILE_PAGE_SECONDS, never waiting
    on the broker. No query: `incident` is incidents.selectors.incident_get's, whose
    annotations say how many alerts fire and when they were last asked about. Whether
    it queued."""
    incident_id = incident.pk
    firing = sum(
        int(getattr(incident, name, 0) or 0)
        for name in ("firing_count", "silenced_count", "inhibited_count")
    )
    last_asked: datetime | None = getattr(incident, "am_asked_at", None)
    window = settings.ALERTMANAGER_RECONCILE_PAGE_SECONDS
    if not firing or (last_asked and last_asked >= timezone.now() - timedelta(seconds=window)):
        return False
    # Also per process, so a burst of page loads before the worker answers queues one.
    if not cache.add(f"alertmanager-reconcile:{incident_id}", 1, window):
        return False
    try:
        # By name: the tasks module imports this one. No publish retries: the page goes on.
        current_app.tasks[TASK].apply_async(kwargs={"incident_id": incident_id}, retry=False)
    except Exception:
        log.warning("could not queue the Alertmanager reconcile of #%s", incident_id, exc_info=True)
        cache.delete(f"alertmanager-reconcile:{incident_id}")
        return False
    return True
