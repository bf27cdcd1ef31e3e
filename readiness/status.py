"""Red/amber/green: what each item's state means on the page, and the deployment's
overall colour (its worst item)."""

from __future__ import annotations

from datetime import date

from console.texts import Msg, msg
from readiness import texts  # noqa: F401  # registry: the sign-off summaries' ids
from readiness.models import ItemState, SignOffAction

GREEN, AMBER, RED = "green", "amber", "red"
RAG_OF_STATE: dict[str, str] = {
    ItemState.VERIFIED: GREEN,
    ItemState.SIGNED_OFF: GREEN,
    # Held once, but nobody has confirmed it lately / nobody could look: not a launch
    # blocker by itself, but not a green either.
    ItemState.EXPIRED: AMBER,
    ItemState.UNKNOWN: AMBER,
    ItemState.FAILING: RED,
}
_ORDER = {GREEN: 0, AMBER: 1, RED: 2}


def overall(rags: list[str]) -> str:
    return max(rags, key=_ORDER.__getitem__, default=AMBER)


def signoff_state(latest, today: date) -> tuple[str, Msg]:
    """(state, summary) of a person-signed item from its newest sign-off row (or None).
    The summary is worded when read (readiness/texts.py); the note stays as typed."""
    if latest is None:
        return ItemState.FAILING, msg("readiness.signoff.none")
    who, day = latest.by.get_username(), f"{latest.at:%Y-%m-%d}"
    if latest.action == SignOffAction.REVOKE:
        said = msg("readiness.signoff.revoked", who=who, day=day, note=latest.note)
        return ItemState.FAILING, said
    until = f"{latest.expires_on:%Y-%m-%d}" if latest.expires_on else ""
    if latest.expires_on and latest.expires_on < today:
        return ItemState.EXPIRED, msg("readiness.signoff.expired", who=who, day=day, until=until)
    return ItemState.SIGNED_OFF, msg("readiness.signoff.valid", who=who, day=day, until=until)
