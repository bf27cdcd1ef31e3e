"""What the guard reads of the incidents' alerts (reads only).

- `excuses`: a guard signal names the alert rules that fire on it (the runbook's
  `alerts:`); while one of them fires in an open incident about the same namespace/lws
  and started before the change, the signal is not blamed on the change. An alert that
  started after the change excuses nothing: it may be the change's doing.
- `incident_for_outside_change`: a ConfigMap changed outside the console is watched only
  on an incident whose alerts are live and about that object.

"Live": firing, and received from Alertmanager within GUARD_ALERT_LIVE_SECONDS (it re-sends
a firing group at least every repeat_interval). A sample incident whose alert was posted
once and never re-sent is not live; neither is a seeded demo incident.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from actions.guard import texts  # noqa: F401  (registers the "guard.*" ids)
from actions.kinds import KINDS
from console.texts import Msg, at, msg
from incidents.models import OPEN_STATUSES, Alert, AlertStatus, Incident
from runbooks.catalog import load_catalog
from runbooks.triage import incident_alerts_firing_first, incident_runbook


def live_alerts(now: datetime | None = None) -> QuerySet[Alert]:
    """Firing alerts of open, real incidents, re-sent by Alertmanager recently."""
    since = (now or timezone.now()) - timedelta(seconds=int(settings.GUARD_ALERT_LIVE_SECONDS))
    return Alert.objects.filter(
        Q(last_received_at__gte=since) | Q(incident__last_notified_at__gte=since),
        status=AlertStatus.FIRING,
        incident__status__in=OPEN_STATUSES,
        incident__is_demo=False,  # seeded demo history is never live
    )


def signal_alerts(
    signals: list[dict], labels: dict[str, Any], changed_at: datetime, incident_id: int
) -> tuple[dict[str, Msg], dict[str, Msg]]:
    """What the signals' own alerts (`alerts:`) say about a breach, in one read of the
    live alerts about the same namespace (and lws, when the alert names one):
    - excused, {signal id: why}: the alert fired before the change in an open incident,
      so the signal was already bad and is not blamed on the change;
    - coinciding, {signal id: why}: it began after the change in another open incident,
      a failure with an incident of its own. It may still be the change's doing, so a
      breach it explains is shown, not counted, and left to a person (judge.COINCIDES)."""
    names = {name for s in signals for name in s.get("alerts") or ()}
    namespace, lws = labels.get("namespace"), labels.get("lws")
    if not names or not namespace:
        return {}, {}
    found = live_alerts().filter(alertname__in=names, labels__namespace=namespace)
    if lws:
        found = found.filter(Q(labels__lws=lws) | ~Q(labels__has_key="lws"))
    before: dict[str, Alert] = {}
    after: dict[str, Alert] = {}
    for alert in found.order_by("starts_at", "pk"):
        if alert.starts_at < changed_at:
            before.setdefault(alert.alertname, alert)
        elif alert.incident_id != incident_id:
            after.setdefault(alert.alertname, alert)
    excused = _first_per_signal(signals, before, "guard.alert.excused")
    coinciding = _first_per_signal(signals, after, "guard.alert.coincides")
    return excused, coinciding


def _first_per_signal(signals: list[dict], first: dict[str, Alert], key: str) -> dict[str, Msg]:
    out = {}
    for s in signals:
        hit = next((first[a] for a in s.get("alerts") or () if a in first), None)
        if hit is not None:
            out[s["id"]] = msg(
                key, alert=hit.alertname, incident=hit.incident_id, time=at(hit.starts_at)
            )
    return out


def runbook_configmaps(incident: Incident, namespace: str) -> set[str]:
    """The ConfigMaps the incident's runbook's actions change in `namespace` (e.g. the
    router's for rollback_router_config, the gateway's for update_gateway_limits)."""
    if incident.runbook:
        runbook = load_catalog().get(incident.runbook)
    else:
        runbook = incident_runbook(incident, incident_alerts_firing_first(incident))
    if runbook is None:
        return set()
    out = set()
    for ref in runbook.emergency_actions:
        kind = KINDS.get(ref.kind)
        name = kind.configmap_of(ref.params) if kind is not None else None
        where = str(ref.params.get("namespace") or "{namespace}")
        if name and where in ("{namespace}", namespace):
            out.add(name)
    return out


def incident_for_outside_change(namespace: str, configmap: str) -> Incident | None:
    """The open incident a change to `namespace/configmap` made outside the console is
    watched on: a real (not drill, not demo) incident with a live alert in that namespace
    whose runbook offers an action on that ConfigMap. None: no watch."""
    candidates = Incident.objects.filter(
        pk__in=live_alerts().filter(labels__namespace=namespace).values("incident_id"),
        is_drill=False,
    ).order_by("severity", "-pk")
    for incident in candidates:
        if configmap in runbook_configmaps(incident, namespace):
            return incident
    return None
