"""An incident opened inside a maintenance window is not paged while the window lasts;
if it is still firing, unacknowledged, when the window ends, the escalation starts then.
A real outage that began during planned work and outlasts it must not stay silent."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from incidents.models import IncidentStatus
from pager import timeline_kinds
from pager.escalation.timeline import Entries, part
from pager.maintenance.selectors import window_for_incident
from pager.models import Escalation, EscalationState
from pager.transitions import escalation_move

S = EscalationState


def suppressed_due(batch: int) -> list[int]:
    """Suppressed escalations of incidents still triggered: candidates to resume."""
    return list(
        Escalation.objects.filter(state=S.SUPPRESSED, incident__status=IncidentStatus.TRIGGERED)
        .order_by("pk")
        .values_list("pk", flat=True)[:batch]
    )


def suppression_end(escalation_id: int, now: datetime) -> bool:
    """Resume paging when no window covers the incident any more; True when it did."""
    with transaction.atomic():
        escalation = (
            Escalation.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("incident", "policy", "maintenance")
            .filter(pk=escalation_id, state=S.SUPPRESSED)
            .first()
        )
        if escalation is None or escalation.incident.status != IncidentStatus.TRIGGERED:
            return False
        if escalation.policy is None or window_for_incident(escalation.incident, now) is not None:
            return False
        window = escalation.maintenance.name if escalation.maintenance else "?"
        escalation_move(escalation, S.ACTIVE)
        escalation.next_due_at, escalation.ended_at = now, None
        escalation.step_index = escalation.loop = 0
        escalation.save()
        entries = Entries(escalation)
        entries.add(
            timeline_kinds.MAINTENANCE,
            "resumed",
            [part("maintenance_over", window=window)],
            window=escalation.maintenance_id,
        )
        entries.record()
        return True
