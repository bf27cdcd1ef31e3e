"""What the escalation engine writes on the incident timeline: one line per thing it did
or did not do (started, paged, skipped a step, waited, repeated, reached the last step,
stopped, re-paged).

Each line is stored once in English, like every timeline entry, and its payload keeps
the sentence as parts (`text`: [[key, params], ...], a param itself parts when it is a
phrase of its own), so a Chinese page words it again (`reword`, registered with
incidents.timeline_text). The payload also says `what` happened, for which `escalation`,
and the step's position where there is one. Entries are collected while a step runs and
written in one INSERT, in the transaction of the change."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, time
from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext, gettext_noop

from incidents.services.timeline import incident_event_record, incident_events_record
from pager import timeline_kinds
from pager.models import Escalation
from pager.routing import WHY

SOURCE = "pager"
Parts = list[list[Any]]

TEMPLATES: dict[str, str] = {
    **WHY,
    # A team paged by hand (pager/paging/services/manual.py).
    "paged_manual": gettext_noop(
        "Paged %(user)s (on call in schedule %(schedule)s of team %(team)s), at %(by)s's request."
    ),
    "manual_message": gettext_noop("Message: %(message)s"),
    "maintenance_over": gettext_noop(
        "Maintenance window %(window)s is over and the incident is still firing, "
        "unacknowledged: paging starts now."
    ),
    # Written by pager/maintenance/ when a window's occurrence ends.
    "maintenance_ended": gettext_noop(
        "Maintenance window %(window)s ended; this incident opened inside it and nobody was paged."
    ),
    "started": gettext_noop("Escalation started: policy %(policy)s, team %(team)s (%(why)s)."),
    "started_no_team": gettext_noop("Escalation started: policy %(policy)s, no team (%(why)s)."),
    "no_policy_team": gettext_noop(
        "Nobody paged: no escalation policy covers this incident (%(why)s). To page, set an "
        "escalation policy on team %(team)s or mark a policy as the default."
    ),
    "no_policy": gettext_noop(
        "Nobody paged: no escalation policy covers this incident (%(why)s). To page, mark an "
        "escalation policy as the default (or give a team these labels)."
    ),
    "drill": gettext_noop("Nobody paged: this is a drill incident (PAGER_PAGE_DRILLS is off)."),
    "maintenance": gettext_noop("Opened inside maintenance window %(window)s: nobody paged."),
    "before_ack": gettext_noop(
        "Nobody paged: %(user)s acknowledged the incident before paging began."
    ),
    "before_ack_nobody": gettext_noop(
        "Nobody paged: the incident was acknowledged before paging began."
    ),
    "before_mitigated": gettext_noop(
        "Nobody paged: the incident was mitigated before paging began."
    ),
    "before_resolved": gettext_noop("Nobody paged: the incident was resolved before paging began."),
    "fired_again": gettext_noop(
        "Alerts fire again after mitigation: paging again from the first step."
    ),
    "fired_again_ack": gettext_noop(
        "Alerts fire again after mitigation; the incident is still acknowledged, so nobody is "
        "paged now."
    ),
    "expiry": gettext_noop(
        "If it is neither mitigated nor resolved by %(time)s, paging starts again."
    ),
    "paged_named": gettext_noop("Paged %(user)s (step %(step)s: named in the policy)."),
    "paged_oncall": gettext_noop(
        "Paged %(user)s (step %(step)s: on call in schedule %(schedule)s)."
    ),
    "paged_channel": gettext_noop("Paged team %(team)s's channel %(channel)s (step %(step)s)."),
    "late": gettext_noop("Sent %(seconds)ss late (the escalation was not run on time)."),
    "no_contact": gettext_noop(
        "%(user)s has no contact method: the page could not be sent. Add one on the pager's "
        "contact methods page."
    ),
    "gap": gettext_noop(
        "Nobody paged by step %(step)s: schedule %(schedule)s has nobody on call at %(time)s "
        "(a gap in the schedule)."
    ),
    "no_schedule": gettext_noop(
        "Nobody paged by step %(step)s: it pages who is on call, but neither the step nor the "
        "owning team has a schedule."
    ),
    "no_person": gettext_noop(
        "Nobody paged by step %(step)s: it pages a person, but none is set or the account is "
        "disabled."
    ),
    "no_channel_team": gettext_noop(
        "Nothing posted by step %(step)s: team %(team)s has no enabled channel (set its "
        "channel to a notification target)."
    ),
    "no_channel": gettext_noop(
        "Nothing posted by step %(step)s: neither the step nor the policy names a team."
    ),
    "skip_severity": gettext_noop(
        "Skipped step %(step)s: it is only for %(severities)s, and this incident is %(severity)s."
    ),
    "skip_hours": gettext_noop(
        "Skipped step %(step)s: it runs only from %(start)s to %(end)s (%(zone)s), and it is "
        "%(now)s there."
    ),
    "wait": gettext_noop("Waiting %(minutes)s min before the next step (due at %(time)s)."),
    "repeat": gettext_noop(
        "Reached the last step; repeating the policy (repeat %(loop)s of %(times)s)."
    ),
    "exhausted": gettext_noop("Reached the last step; nobody acknowledged."),
    "nothing_applies": gettext_noop(
        "Reached the last step; no step paged anyone for this incident."
    ),
    "no_steps": gettext_noop("Nobody paged: the escalation policy has no steps."),
    "acknowledged": gettext_noop("Escalation stopped: acknowledged by %(user)s."),
    "acknowledged_nobody": gettext_noop("Escalation stopped: acknowledged."),
    "ack_expired": gettext_noop(
        "Acknowledgement expired without progress after %(minutes)s min: paging again from "
        "the first step (re-page %(round)s)."
    ),
    "ack_expired_plain": gettext_noop(
        "Acknowledgement expired without progress: paging again from the first step "
        "(re-page %(round)s)."
    ),
    "stopped": gettext_noop("Escalation stopped: %(reason)s."),
    # The reasons the engine stops for (Escalation.stop_reason holds the English).
    "reason.mitigated": gettext_noop("incident mitigated"),
    "reason.resolved": gettext_noop("incident resolved"),
    "reason.policy_gone": gettext_noop("its escalation policy was deleted"),
    "reason.no_policy": gettext_noop("no escalation policy"),
    "reason.drill": gettext_noop("drill incident: not paged"),
    "reason.demo": gettext_noop("demo incident: not paged"),
}
# Escalation.stop_reason values the engine writes (English) and their words.
REASON_KEYS = {
    "incident mitigated": "reason.mitigated",
    "incident resolved": "reason.resolved",
    "its escalation policy was deleted": "reason.policy_gone",
    "no escalation policy": "reason.no_policy",
    "drill incident: not paged": "reason.drill",
    "demo incident: not paged": "reason.demo",
}


def part(key: str, **params: Any) -> list[Any]:
    return [key, params]


def render(parts: Parts, translate: Callable[[str], str] = str) -> str:
    """The sentence the parts say, each template through `translate` (English: as is)."""
    out = []
    for key, params in parts:
        values = {
            name: render(value, translate) if isinstance(value, list) else value
            for name, value in params.items()
        }
        out.append(translate(TEMPLATES[key]) % values)
    return " ".join(out)


def reword(message: str, payload: dict[str, Any]) -> str | None:
    """The line in the active language (incidents.timeline_text); None: as stored (an
    entry another part of the pager wrote, or one this code no longer knows)."""
    parts = payload.get("text")
    if not isinstance(parts, list) or not parts:
        return None
    try:
        return render(parts, gettext)
    except (KeyError, TypeError, ValueError):
        return None


@dataclass
class Entries:
    """The timeline entries of one change to one escalation, in order; `actor` when a
    person's decision made the change (else the pager's own)."""

    escalation: Escalation
    actor: User | None = None
    rows: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def add(self, kind: str, what: str, parts: Parts, **payload: Any) -> None:
        self.rows.append((kind, render(parts), {"what": what, "text": parts, **payload}))

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


def hhmm(moment: datetime) -> str:
    return f"{moment:%H:%M} UTC"


def clock(value: time | None, empty: str) -> str:
    return f"{value:%H:%M}" if value is not None else empty


def reason_parts(reason: str) -> Parts | str:
    key = REASON_KEYS.get(reason)
    return [part(key)] if key else reason


def late_parts(late: float, tick: float) -> Parts:
    """A page more than two ticks late says so (the escalation was not run on time)."""
    return [part("late", seconds=f"{late:.0f}")] if late > 2 * tick else []


def expiry_parts(expires_at: datetime | None) -> Parts:
    return [part("expiry", time=hhmm(expires_at))] if expires_at is not None else []
