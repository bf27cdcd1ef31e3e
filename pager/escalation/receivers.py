"""What the escalation engine hears from the incident timeline (incidents'
`timeline_appended`, sent after the writer's transaction commits).

Read from each event's kind and payload alone (no queries, no network: this runs in
the webhook's request, ingest storms included); each change is handed to a task. A
broker that does not answer is logged and costs nothing else: the tick starts what a
lost start task did not, and each advance reconciles with the incident's status first.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task

from incidents.models import IncidentStatus, TimelineEvent, TimelineEventType
from pager import timeline_kinds
from pager.escalation.services import STOP_REASONS
from pager.tasks import escalation as tasks

log = logging.getLogger(__name__)
IS = IncidentStatus
_CLOSED = (IS.MITIGATED, IS.RESOLVED)
_OPEN_AGAIN = (IS.TRIGGERED, IS.ACKNOWLEDGED)


def changes_for(events: list[TimelineEvent]) -> list[tuple[Task, tuple[Any, ...]]]:
    """The tasks the events call for, once each, in the events' order."""
    wanted: dict[tuple[str, tuple[Any, ...]], Task] = {}
    for event in events:
        payload = event.payload if isinstance(event.payload, dict) else {}
        incident_id = event.incident_id
        if event.kind == TimelineEventType.INCIDENT_OPENED:
            wanted[(tasks.start.name, (incident_id,))] = tasks.start
            continue
        if event.kind == timeline_kinds.PAGE and payload.get("event") == "acknowledged":
            # A page's one-tap link: for a re-page the incident is acknowledged already,
            # so no status change says it.
            wanted[(tasks.acknowledge.name, (incident_id, event.actor_id))] = tasks.acknowledge
            continue
        if event.kind != TimelineEventType.STATUS_CHANGED:
            continue
        old, new = payload.get("from"), payload.get("to")
        if new in _CLOSED:
            args: tuple[Any, ...] = (incident_id, STOP_REASONS[new])
            wanted[(tasks.stop.name, args)] = tasks.stop
        elif old in _CLOSED and new in _OPEN_AGAIN:
            # Reopened (a new episode) or firing again after mitigation (a new round).
            wanted[(tasks.start.name, (incident_id,))] = tasks.start
        elif new == IS.ACKNOWLEDGED:
            wanted[(tasks.acknowledge.name, (incident_id, event.actor_id))] = tasks.acknowledge
    return [(task, args) for (_, args), task in wanted.items()]


def timeline_appended_receive(
    sender: object, events: list[TimelineEvent], **kwargs: object
) -> None:
    for task, args in changes_for(events):
        try:
            # retry=False: fail at once rather than hold the webhook in kombu's retries.
            task.apply_async(args, retry=False)
        except Exception as exc:  # kombu and redis raise several types for a broker that is down
            log.warning(
                "pager: could not queue %s%r (the tick catches up): %s", task.name, args, exc
            )
