"""Postmortem and action-item changes on the incident's own timeline, so the incident page
shows what happened after the fire too (postmortems calls into incidents, never the
reverse). Every line is a `Msg` (postmortems/texts.py): stored as parts, worded in each
reader's language."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User

from console.surface import current_surface
from console.texts import Msg, msg
from incidents.services import incident_event_record
from postmortems import texts  # noqa: F401 (registers the ids these lines use)
from postmortems.models import ActionItem, Postmortem
from postmortems.timeline_kinds import ACTION_ITEM, POSTMORTEM

ITEM_TITLE_CHARS = 120


def postmortem_event(pm: Postmortem, actor: User | None, what: Msg, **payload: Any) -> None:
    incident_event_record(
        incident_id=pm.incident_id,
        kind=POSTMORTEM,
        message=msg("postmortems.timeline.postmortem", id=pm.pk, what=what),
        payload={"postmortem": pm.pk, **payload},
        actor=actor,
        source=current_surface() if actor is not None else "worker",
    )


def item_event(item: ActionItem, actor: User | None, what: Msg, **payload: Any) -> None:
    incident_event_record(
        incident_id=item.incident_id,
        kind=ACTION_ITEM,
        message=msg(
            "postmortems.timeline.item", id=item.pk, title=item.title[:ITEM_TITLE_CHARS], what=what
        ),
        payload={"action_item": item.pk, **payload},
        actor=actor,
        source=current_surface(),
    )


def listed(parts: Sequence[Msg], *, key: str = "postmortems.change.list") -> Msg:
    """Phrases as one list ("a, b, c"; `key` names the separator's template)."""
    out = parts[-1]
    for part in reversed(parts[:-1]):
        out = msg(key, first=part, rest=out)
    return out


def field_word(name: str) -> Msg:
    """A postmortem field's name (title, summary, root cause...), in the reader's words."""
    return msg(f"postmortems.field.{name}")


def who_did(actor: User | None) -> Any:
    return actor.get_username() if actor is not None else msg("postmortems.who.worker")
