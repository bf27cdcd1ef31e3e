"""What drills hears from incidents: the timeline's announcement (incidents.timeline_signal)
that incidents opened or fired again. A real SEV1 doing so stops a running drill at once,
rather than on the watcher's next beat (which stays the backstop). Connected from
DrillsConfig.ready()."""

from __future__ import annotations

import logging
from typing import Any

from drills.execution import drill_runs_stop_for_real_sev1
from drills.models import DrillRun, DrillRunStatus
from incidents.models import IncidentStatus, TimelineEvent, TimelineEventType

log = logging.getLogger(__name__)
FIRING = (IncidentStatus.TRIGGERED, IncidentStatus.ACKNOWLEDGED)


def _opens(event: TimelineEvent) -> bool:
    """An incident opening, reopening or firing again after mitigation."""
    if event.kind == TimelineEventType.INCIDENT_OPENED:
        return True
    payload = event.payload or {}
    return (
        event.kind == TimelineEventType.STATUS_CHANGED
        and payload.get("to") in FIRING
        and (payload.get("from") in (IncidentStatus.MITIGATED, IncidentStatus.RESOLVED))
    )


def on_timeline_appended(sender: Any, events: list[TimelineEvent], **kwargs: Any) -> None:
    ids = sorted({e.incident_id for e in events if _opens(e)})
    if not ids or not DrillRun.objects.filter(status=DrillRunStatus.RUNNING).exists():
        return
    stopped = drill_runs_stop_for_real_sev1(incident_ids=ids)
    if stopped:
        log.info("drill runs %s stopped: a real SEV1 among incidents %s", stopped, ids)
