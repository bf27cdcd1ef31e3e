"""What on the incident timeline is worth a notification, read from each event's kind and
payload alone (no queries: this runs for every appended event, ingest storms included).

The kinds belong to the apps that write them: incidents' own (TimelineEventType), an
action run's status changes (actions' ACTION, payload `status`), a postmortem's
(postmortems' POSTMORTEM, payload `postmortem`). A postmortem event is only a candidate:
whether it started a review round needs the postmortem row (services/deliveries.py decides).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from actions.models import ActionRunStatus
from actions.timeline_kinds import ACTION
from incidents.models import IncidentStatus, TimelineEvent, TimelineEventType
from incidents.rules import is_worse
from notifications.models import Event
from postmortems.timeline_kinds import POSTMORTEM

# Back from mitigated (alerts fire again) or from resolved (reopened): INCIDENT_REOPENED.
_FIRED_AGAIN_FROM = {IncidentStatus.MITIGATED, IncidentStatus.RESOLVED}
_FIRED_AGAIN_TO = {IncidentStatus.TRIGGERED, IncidentStatus.ACKNOWLEDGED}
_STATUS_EVENTS = {
    IncidentStatus.MITIGATED: Event.INCIDENT_MITIGATED,
    IncidentStatus.RESOLVED: Event.INCIDENT_RESOLVED,
}


@dataclass(frozen=True)
class Notice:
    """One event to tell targets about: `key` names it (see Delivery.event_key)."""

    event: str
    key: str
    incident_id: int
    occurred_at: datetime
    text: str = ""  # the timeline's own sentence, when there is one
    # That sentence as parts (payload["msg"]), when the console wrote it: worded in each
    # target's language. None for a person's words and for lines written before.
    text_msg: list[Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    actor_id: int | None = None


def notice_for(event: TimelineEvent) -> Notice | None:
    payload = event.payload if isinstance(event.payload, dict) else {}

    def notice(what: str, details: dict[str, Any], key: str = "") -> Notice:
        return Notice(
            event=what,
            key=key or f"timeline:{event.pk}",
            incident_id=event.incident_id,
            occurred_at=event.occurred_at,
            text=event.message,
            text_msg=payload.get("msg") if isinstance(payload.get("msg"), list) else None,
            details=details,
            actor_id=event.actor_id,
        )

    if event.kind == TimelineEventType.INCIDENT_OPENED:
        return notice(Event.INCIDENT_OPENED, {"reopened": False})
    if event.kind == TimelineEventType.STATUS_CHANGED:
        old, new = payload.get("from"), payload.get("to")
        if old in _FIRED_AGAIN_FROM and new in _FIRED_AGAIN_TO:
            # A fix that did not hold: by a commander's reopen, or its alerts firing again.
            how = "by_hand" if event.actor_id is not None else "alerts"
            return notice(Event.INCIDENT_REOPENED, {"previous_status": old, "reopened_by": how})
        if new in _STATUS_EVENTS:
            return notice(_STATUS_EVENTS[new], {"previous_status": old})
        return None
    if event.kind == TimelineEventType.SEVERITY_CHANGED:
        old, new = str(payload.get("from", "")), str(payload.get("to", ""))
        raised = is_worse(new, old)
        return notice(Event.SEVERITY_RAISED, {"from": old, "to": new}) if raised else None
    if event.kind == TimelineEventType.COMMANDER_CHANGED:
        change = {"from": payload.get("from"), "to": payload.get("to")}
        return notice(Event.COMMANDER_CHANGED, change)
    if event.kind == ACTION and payload.get("status") == ActionRunStatus.AWAITING_APPROVAL:
        run = payload.get("run")
        what = {"run": run, "kind": payload.get("kind", ""), "target": payload.get("target", "")}
        # Once per run: later events of a run still waiting (none today) are not news.
        return notice(Event.APPROVAL_WANTED, what, key=f"approval:{run}")
    if event.kind == POSTMORTEM and isinstance(payload.get("postmortem"), int):
        return notice(Event.POSTMORTEM_IN_REVIEW, {"postmortem": payload["postmortem"]})
    return None
