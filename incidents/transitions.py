"""The incident state machine: the one place that decides which moves are allowed.

Every status change, whether a person clicks or Alertmanager reports, goes through
`apply_transition`, which sets the transition timestamps and builds the timeline event.
Callers save both (one at a time from a button, in bulk from ingestion).
"""

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.utils.functional import Promise
from django.utils.translation import gettext_noop, pgettext_lazy

from console.errors import DomainError
from console.texts import Msg, msg
from incidents.models import Incident, IncidentStatus, TimelineEvent, TimelineEventType
from incidents.texts import event_say

S = IncidentStatus

# (from, to) -> the verb shown on the timeline.
ALLOWED: dict[tuple[str, str], str] = {
    (S.TRIGGERED, S.ACKNOWLEDGED): "acknowledged",
    (S.TRIGGERED, S.MITIGATED): "mitigated",
    (S.ACKNOWLEDGED, S.MITIGATED): "mitigated",
    (S.TRIGGERED, S.RESOLVED): "resolved",
    (S.ACKNOWLEDGED, S.RESOLVED): "resolved",
    (S.MITIGATED, S.RESOLVED): "resolved",
    # Alerts firing again after mitigation put the incident back where it was.
    (S.MITIGATED, S.TRIGGERED): "re-triggered",
    (S.MITIGATED, S.ACKNOWLEDGED): "re-triggered",
    # Reopen: a commander's decision, or the group firing again within the flap window.
    (S.RESOLVED, S.TRIGGERED): "reopened",
}


# Moves only Alertmanager makes: a person cannot "re-trigger" a mitigated incident.
SYSTEM_ONLY = {(S.MITIGATED, S.TRIGGERED), (S.MITIGATED, S.ACKNOWLEDGED)}

# A status inside a sentence ("Incident #4 is mitigated"): the value in English, so
# refusals read as before; a page shows the word in its own language.
_STATUS_WORDS: dict[str, Promise] = {
    S.TRIGGERED: pgettext_lazy("incident status in a sentence", "triggered"),
    S.ACKNOWLEDGED: pgettext_lazy("incident status in a sentence", "acknowledged"),
    S.MITIGATED: pgettext_lazy("incident status in a sentence", "mitigated"),
    S.RESOLVED: pgettext_lazy("incident status in a sentence", "resolved"),
}


def status_word(status: str) -> str | Promise:
    """The status as a lazy word for a refusal's params (an unknown value as it is)."""
    return _STATUS_WORDS.get(status, status)


@dataclass(frozen=True)
class Transition:
    from_status: str
    to_status: str
    verb: str


class TransitionError(DomainError):
    code = "invalid_transition"


def apply_transition(
    incident: Incident,
    to_status: str,
    *,
    at: datetime,
    actor: User | None = None,
    source: str = "console",
    reason: str | Msg = "",
) -> tuple[Transition, TimelineEvent]:
    """Move `incident` (in memory) to `to_status`; return the unsaved timeline event.
    `reason`: what a person typed (after "Incident mitigated: "), or the console's own
    words (a Msg: the whole line)."""
    from_status = incident.status
    if from_status == to_status:
        raise TransitionError(
            gettext_noop("Incident #%(id)s is already %(status)s."),
            params={"id": incident.pk, "status": status_word(to_status)},
        )
    verb = ALLOWED.get((from_status, to_status))
    if actor is not None and (from_status, to_status) in SYSTEM_ONLY:
        raise TransitionError(
            gettext_noop(
                "Incident #%(id)s is mitigated; it goes back to %(status)s only when "
                "its alerts fire again. Resolve it, or add a note."
            ),
            params={"id": incident.pk, "status": status_word(to_status)},
        )
    if verb is None:
        raise TransitionError(
            gettext_noop("Incident #%(id)s is %(from)s; it cannot move to %(to)s."),
            params={
                "id": incident.pk,
                "from": status_word(from_status),
                "to": status_word(to_status),
            },
        )
    incident.status = to_status
    human = actor is not None
    if to_status == S.ACKNOWLEDGED and incident.acknowledged_at is None:
        incident.acknowledged_at = at
    if to_status == S.MITIGATED:
        incident.mitigated_at = at
    if to_status in (S.MITIGATED, S.RESOLVED) and human and incident.acknowledged_at is None:
        # A person acting on the incident has, in effect, acknowledged it (MTTA).
        incident.acknowledged_at = at
    if to_status == S.RESOLVED:
        incident.resolved_at = at
        if incident.mitigated_at is None:
            incident.mitigated_at = at
    if from_status == S.MITIGATED and to_status in (S.TRIGGERED, S.ACKNOWLEDGED):
        incident.mitigated_at = None
    if from_status == S.RESOLVED:
        incident.resolved_at = None
        incident.mitigated_at = None
        incident.reopened_at = at
        incident.reopen_count += 1
    event = TimelineEvent(
        incident=incident,
        kind=TimelineEventType.STATUS_CHANGED,
        occurred_at=at,
        actor=actor,
        source=source,
        payload={"from": from_status, "to": to_status, "verb": verb},
    )
    event_say(event, status_line(verb, reason))
    return Transition(from_status, to_status, verb), event


def status_line(verb: str, reason: str | Msg = "") -> Msg:
    """The timeline line of a status change: "Incident mitigated." or, with a person's
    reason, "Incident mitigated: <reason>"; the console's own reason is the line."""
    if isinstance(reason, Msg):
        return reason
    if reason:
        return msg(f"incidents.status.{verb}.reason", reason=reason)
    return msg(f"incidents.status.{verb}")


def retrigger_status(incident: Incident) -> str:
    """Where a mitigated incident goes when its alerts fire again."""
    return S.ACKNOWLEDGED if incident.acknowledged_at else S.TRIGGERED
