"""Flag an incident as a drill. `incidents` does not know what a drill is (runbooks owns
them); the drill worker calls this once it has matched the incident to its drill run."""

from typing import Any

from django.db import transaction

from console.texts import Msg
from incidents.models import TimelineEvent
from incidents.selectors import incident_for_update
from incidents.services.timeline import incident_event_record


@transaction.atomic
def incident_drill_mark(
    *, incident_id: int, kind: str, message: str | Msg, payload: dict[str, Any]
) -> TimelineEvent:
    """Set `is_drill` and say so on the timeline with the caller's registered `kind`, in
    one transaction. A caller that has already checked permissions (the drill worker)
    calls it. A `Msg` message is stored as parts too (incident_event_record)."""
    incident = incident_for_update(incident_id=incident_id)
    if not incident.is_drill:
        incident.is_drill = True
        incident.save(update_fields=["is_drill", "updated_at"])
    return incident_event_record(
        incident_id=incident_id, kind=kind, message=message, payload=payload
    )
