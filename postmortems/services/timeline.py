"""Postmortem and action-item changes on the incident's own timeline, so the incident page
shows what happened after the fire too (postmortems calls into incidents, never the
reverse)."""

from __future__ import annotations

from incidents.models import TimelineEventType
from incidents.services import incident_event_record


def postmortem_event(pm, actor, message: str, **payload) -> None:
    incident_event_record(
        incident_id=pm.incident_id,
        kind=TimelineEventType.POSTMORTEM,
        message=f"Postmortem #{pm.pk}: {message}",
        payload={"postmortem": pm.pk, **payload},
        actor=actor,
        source="console" if actor is not None else "worker",
    )


def item_event(item, actor, message: str, **payload) -> None:
    incident_event_record(
        incident_id=item.incident_id,
        kind=TimelineEventType.ACTION_ITEM,
        message=f"Action item #{item.pk} “{item.title[:120]}”: {message}",
        payload={"action_item": item.pk, **payload},
        actor=actor,
        source="console",
    )
