"""Red/amber/green: what each item's state means on the page, and the deployment's
overall colour (its worst item)."""

from __future__ import annotations

from datetime import date

from django.utils.translation import gettext

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


def signoff_state(latest, today: date) -> tuple[str, str]:
    """(state, summary) of a person-signed item from its newest sign-off row (or None)."""
    if latest is None:
        return ItemState.FAILING, "Not signed off yet: a commander signs it off with a note."
    who = latest.by.get_username()
    if latest.action == SignOffAction.REVOKE:
        return (
            ItemState.FAILING,
            f"Sign-off revoked by {who} on {latest.at:%Y-%m-%d}: {latest.note}",
        )
    if latest.expires_on and latest.expires_on < today:
        return (
            ItemState.EXPIRED,
            f"Signed off by {who} on {latest.at:%Y-%m-%d}; "
            f"expired on {latest.expires_on:%Y-%m-%d}.",
        )
    return (
        ItemState.SIGNED_OFF,
        f"Signed off by {who} on {latest.at:%Y-%m-%d}, valid until {latest.expires_on:%Y-%m-%d}.",
    )


def signoff_summary_shown(latest, state: str) -> str:
    """signoff_state's summary in the viewer's language, for the pages (the API and the
    stored data keep the English one)."""
    if latest is None:
        return gettext("Not signed off yet: a commander signs it off with a note.")
    values = {
        "who": latest.by.get_username(),
        "day": f"{latest.at:%Y-%m-%d}",
        "until": f"{latest.expires_on:%Y-%m-%d}" if latest.expires_on else "",
        "note": latest.note,
    }
    if latest.action == SignOffAction.REVOKE:
        return gettext("Sign-off revoked by %(who)s on %(day)s: %(note)s") % values
    if state == ItemState.EXPIRED:
        return gettext("Signed off by %(who)s on %(day)s; expired on %(until)s.") % values
    return gettext("Signed off by %(who)s on %(day)s, valid until %(until)s.") % values
