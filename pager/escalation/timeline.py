"""What the escalation engine writes on the incident timeline: one line per thing it did
or did not do (started, paged, skipped a step, waited, repeated, reached the last step,
stopped, re-paged).

Each line is a `Msg` of the pager's texts (pager/texts.py): stored in English, like every
timeline entry, with its parts in payload["msg"], so every reader sees it in their
language (incidents/timeline_text.py). Lines written before that kept their parts under
payload["text"] with short keys; `reword` still words those. The payload also says `what`
happened, for which `escalation`, and the step's position where there is one. Entries are
collected while a step runs and written in one INSERT, in the transaction of the change."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, time
from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext

from console.texts import Msg, at, join
from incidents.services.timeline import incident_event_record, incident_events_record
from pager import timeline_kinds
from pager.models import Escalation
from pager.texts import TEMPLATES, pager_msg

SOURCE = "pager"
# One line's sentences, in order (joined by a space when written).
Parts = list[Msg]
# What lines written before the core keep in payload["text"]: [[short key, params], ...].
OldParts = list[list[Any]]

# Escalation.stop_reason values the engine writes (English) and their words.
REASON_KEYS = {
    "incident mitigated": "reason.mitigated",
    "incident resolved": "reason.resolved",
    "its escalation policy was deleted": "reason.policy_gone",
    "no escalation policy": "reason.no_policy",
    "drill incident: not paged": "reason.drill",
    "demo incident: not paged": "reason.demo",
}


def part(key: str, **params: Any) -> Msg:
    """One of the pager's sentences by its short key (pager/texts.py)."""
    return pager_msg(key, **params)


def render_old(parts: OldParts, translate: Callable[[str], str] = str) -> str:
    """The sentence old parts say, each template through `translate` (English: as is)."""
    out = []
    for key, params in parts:
        values = {
            name: render_old(value, translate) if isinstance(value, list) else value
            for name, value in params.items()
        }
        out.append(translate(TEMPLATES[key]) % values)
    return " ".join(out)


def reword(message: str, payload: dict[str, Any]) -> str | None:
    """A line written before the core kept its parts in payload["text"] (short keys):
    the line in the active language (incidents.timeline_text); None: as stored (an entry
    another part of the pager wrote, or one this code no longer knows). Lines with
    payload["msg"] never get here."""
    parts = payload.get("text")
    if not isinstance(parts, list) or not parts:
        return None
    try:
        return render_old(parts, gettext)
    except (KeyError, TypeError, ValueError):
        return None


@dataclass
class Entries:
    """The timeline entries of one change to one escalation, in order; `actor` when a
    person's decision made the change (else the pager's own)."""

    escalation: Escalation
    actor: User | None = None
    rows: list[tuple[str, Msg, dict[str, Any]]] = field(default_factory=list)

    def add(self, kind: str, what: str, parts: Parts, **payload: Any) -> None:
        self.rows.append((kind, join(parts), {"what": what, **payload}))

    def escalation_event(self, what: str, parts: Parts, **payload: Any) -> None:
        self.add(timeline_kinds.ESCALATION, what, parts, **payload)

    def record(self) -> None:
        """Write them (after the escalation is saved: the payload names it)."""
        incident_id, rows = self.escalation.incident_id, self.rows
        self.rows = []
        for _, _, payload in rows:
            payload["escalation"] = self.escalation.pk
        if self.actor is not None:
            for kind, message, payload in rows:
                incident_event_record(
                    incident_id=incident_id,
                    kind=kind,
                    message=message,
                    payload=payload,
                    actor=self.actor,
                    source=SOURCE,
                )
        elif rows:
            incident_events_record(
                events=[(incident_id, kind, message, payload) for kind, message, payload in rows],
                source=SOURCE,
            )


def stop_reason_words(reason: str) -> str:
    """An escalation's stop_reason in the active language (a reason a person or another
    service gave is shown as written)."""
    key = REASON_KEYS.get(reason)
    return gettext(TEMPLATES[key]) if key else reason


def hhmm(moment: datetime) -> dict[str, str]:
    """A moment in a line: shown in the reader's zone."""
    return at(moment)


def clock(value: time | None, empty: str) -> str:
    return f"{value:%H:%M}" if value is not None else empty


def reason_parts(reason: str) -> Msg | str:
    key = REASON_KEYS.get(reason)
    return part(key) if key else reason


def late_parts(late: float, tick: float) -> Parts:
    """A page more than two ticks late says so (the escalation was not run on time)."""
    return [part("late", seconds=f"{late:.0f}")] if late > 2 * tick else []


def expiry_parts(expires_at: datetime | None) -> Parts:
    return [part("expiry", time=hhmm(expires_at))] if expires_at is not None else []
