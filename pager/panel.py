"""What the incident page's pager panel shows (templates/pager/_incident_panel_body.html):
the owning team and why, who is on call now and next, the escalation's state in words,
and the pages sent with their deliveries.

A fixed number of queries whatever the incident's history (the pages shown are capped)
and however many schedules the owning team has (read together; one more per imported
calendar). The panel works with
nothing configured: then it says what to add, and where.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Prefetch
from django.utils import timezone
from django.utils.translation import gettext as _

from incidents.models import Incident
from pager.maintenance.selectors import window_for_incident
from pager.models import (
    Escalation,
    EscalationState,
    EscalationStep,
    MaintenanceWindow,
    Page,
    PageDelivery,
    Schedule,
    Team,
)
from pager.routing import Route, route
from pager.schedules.selectors import oncall_now_and_next_many
from pager.schedules.shifts import OnCall
from pager.views.words import step_text

PANEL_PAGES = 20  # the newest pages shown; the pages list has the rest


@dataclass(frozen=True)
class EscalationView:
    escalation: Escalation
    state: str
    next_step: str  # the next step in words ("" when none is due)
    next_due_at: datetime | None
    window: MaintenanceWindow | None


def _escalation_view(escalation: Escalation | None) -> EscalationView | None:
    if escalation is None:
        return None
    next_step = ""
    if escalation.state == EscalationState.ACTIVE and escalation.policy is not None:
        steps = list(escalation.policy.steps.all())
        if escalation.step_index < len(steps):
            next_step = step_text(steps[escalation.step_index], escalation.policy)
        elif steps:
            # Past the last step with repeats left: the policy starts over.
            next_step = step_text(steps[0], escalation.policy)
    return EscalationView(
        escalation=escalation,
        state=escalation.state,
        next_step=next_step,
        next_due_at=escalation.next_due_at,
        window=escalation.maintenance,
    )


def _latest_escalation(incident: Incident) -> Escalation | None:
    steps = EscalationStep.objects.select_related("schedule", "user", "team").order_by("position")
    return (
        Escalation.objects.filter(incident=incident)
        .select_related("team", "policy", "policy__team", "acknowledged_by", "maintenance")
        .prefetch_related(Prefetch("policy__steps", queryset=steps))
        .order_by("-episode", "-pk")
        .first()
    )


def _oncall(found: Route, at: datetime) -> list[tuple[Schedule, OnCall]]:
    # From the route already made: routing the incident again would cost its queries twice.
    if found.team is None:
        return []
    schedules = list(Schedule.objects.filter(team=found.team).order_by("name"))
    oncall = oncall_now_and_next_many(schedules, at)  # all of them in one read
    return [(schedule, oncall[schedule.pk]) for schedule in schedules]


def _pages(incident: Incident) -> list[Page]:
    deliveries = PageDelivery.objects.order_by("position")
    return list(
        Page.objects.filter(incident=incident)
        .select_related("user", "channel")
        .prefetch_related(Prefetch("deliveries", queryset=deliveries))
        .order_by("-created_at", "-pk")[:PANEL_PAGES]
    )


def panel_context(incident: Incident, *, at: datetime | None = None) -> dict[str, Any]:
    """The panel's context. `configured`: any team exists (else the panel says to add one)."""
    at = at or timezone.now()
    found = route(incident)
    escalation = _escalation_view(_latest_escalation(incident))
    window = escalation.window if escalation is not None else None
    if window is None and incident.is_open:
        window = window_for_incident(incident, at)
    configured = found.team is not None or Team.objects.exists()
    return {
        "incident": incident,
        "route": found,
        "configured": configured,
        "oncall": _oncall(found, at),
        "esc": escalation,
        "window": window,
        "pages": _pages(incident),
        "pages_capped": PANEL_PAGES,
        "now": at,
        "not_paged_reason": _not_paged(incident, found, escalation),
    }


def _not_paged(incident: Incident, found: Route, escalation: EscalationView | None) -> str:
    """Why nobody will be paged, when that is knowable without an escalation row."""
    if escalation is not None:
        return ""
    if found.policy is None:
        return _(
            "No escalation policy covers this incident, so nobody is paged: give the team "
            "a policy or mark one policy as the default in the admin."
        )
    if not incident.is_open:
        return _("The incident was closed before any escalation started.")
    return ""
