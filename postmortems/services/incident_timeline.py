"""Postmortem and action-item changes on the incident's own timeline, so the incident page
shows what happened after the fire too (postmortems calls into incidents, never the
reverse)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from console.surface import current_surface
from incidents.services import incident_event_record
from postmortems.models import ActionItem, Postmortem
from postmortems.timeline_kinds import ACTION_ITEM, POSTMORTEM


def postmortem_event(pm: Postmortem, actor: User | None, message: str, **payload: Any) -> None:
    incident_event_record(
        incident_id=pm.incident_id,
        kind=POSTMORTEM,
        message=f"Postmortem #{pm.pk}: {message}",
        payload={"postmortem": pm.pk, **payload},
        actor=actor,
        source=current_surface() if actor is not None else "worker",
    )


def item_event(item: ActionItem, actor: User | None, message: str, **payload: Any) -> None:
    incident_event_record(
        incident_id=item.incident_id,
        kind=ACTION_ITEM,
        message=f"Action item #{item.pk} “{item.title[:120]}”: {message}",
        payload={"action_item": item.pk, **payload},
        actor=actor,
        source=current_surface(),
    )
