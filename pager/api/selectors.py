"""The reads behind the pager's API: the rows each endpoint lists or shows, written once
with their related rows loaded, so a list costs the same queries whatever its length.
Who is on call comes from the schedule arithmetic (pager/schedules/selectors.py), the
owning team from routing (pager/routing.py); this module only gathers rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from console.bounds import MAX_ID
from console.texts import Msg
from incidents.models import Incident
from pager.models import (
    ContactMethod,
    Escalation,
    EscalationPolicy,
    EscalationStep,
    Heartbeat,
    MaintenanceWindow,
    Override,
    Page,
    PageDelivery,
    Schedule,
    ShiftSwap,
    Team,
)
from pager.routing import route
from pager.schedules import selectors as schedules
from pager.schedules.shifts import OnCall


def in_range(pk: int) -> bool:
    """Whether a row can have this id (beyond bigint PostgreSQL errs instead of finding
    nothing)."""
    return 0 < pk <= MAX_ID


# --- who is on call ------------------------------------------------------------------------
def oncall_many(schedule_list: Sequence[Schedule], at: datetime | None = None) -> dict[int, OnCall]:
    """Who is on call now and next for many schedules, read together (a fixed number
    of queries, plus one per schedule with an imported calendar)."""
    return schedules.oncall_now_and_next_many(schedule_list, at or timezone.now())


# --- teams ---------------------------------------------------------------------------------
def _policy_steps() -> Prefetch[Any]:
    steps = EscalationStep.objects.select_related("schedule", "user", "team").order_by("position")
    return Prefetch("escalation_policy__steps", queryset=steps)


def team_list() -> QuerySet[Team]:
    """Every team with what the API shows of it (its schedules' on-call apart)."""
    return (
        Team.objects.select_related("escalation_policy", "channel")
        .prefetch_related(
            "ownerships",
            "members",
            _policy_steps(),
            Prefetch("schedules", queryset=Schedule.objects.order_by("name", "pk")),
        )
        .order_by("name", "pk")
    )


def team_by_slug(slug: str) -> Team | None:
    return team_list().filter(slug=slug).first()


def schedule_by_slug(slug: str) -> Schedule | None:
    return Schedule.objects.select_related("team").filter(slug=slug).first()


# --- pages ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PageFilters:
    team: str = ""  # a team's slug
    user: str = ""  # a username
    status: str = ""
    incident: int | None = None


def _deliveries() -> Prefetch[Any]:
    return Prefetch(
        "deliveries", queryset=PageDelivery.objects.select_related("method").order_by("position")
    )


def _pages() -> QuerySet[Page]:
    return Page.objects.select_related(
        "incident", "escalation__team", "user", "channel"
    ).prefetch_related(_deliveries())


def page_list(*, filters: PageFilters) -> QuerySet[Page]:
    """Pages, newest first, with their deliveries."""
    qs = _pages()
    if filters.team:
        qs = qs.filter(escalation__team__slug=filters.team)
    if filters.user:
        qs = qs.filter(user__username=filters.user)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.incident is not None:
        qs = qs.filter(incident_id=filters.incident)
    return qs.order_by("-created_at", "-id")


def page_get(*, page_id: int) -> Page | None:
    return _pages().filter(pk=page_id).first() if in_range(page_id) else None


# --- an incident: owner, on call, escalation ----------------------------------------------
@dataclass(frozen=True)
class IncidentOnCall:
    incident: Incident
    team: Team | None
    policy: EscalationPolicy | None
    why: Msg  # worded in the request's language by the serializer
    schedules: list[tuple[Schedule, OnCall]]
    escalation: Escalation | None
    pages: list[Page]


def incident_oncall(*, incident_id: int, at: datetime | None = None) -> IncidentOnCall | None:
    """Who owns the incident and why, who is on call in the owning team's schedules, and
    its current escalation (the latest episode) with every page and delivery."""
    incident = Incident.objects.filter(pk=incident_id).first() if in_range(incident_id) else None
    if incident is None:
        return None
    routed = route(incident)
    team_schedules = (
        list(Schedule.objects.filter(team=routed.team).order_by("name", "pk"))
        if routed.team is not None
        else []
    )
    oncall = oncall_many(team_schedules, at)
    escalation = (
        Escalation.objects.select_related("team", "policy", "acknowledged_by", "maintenance")
        .filter(incident=incident)
        .order_by("-episode")
        .first()
    )
    pages = (
        list(_pages().filter(escalation=escalation).order_by("created_at", "id"))
        if escalation is not None
        else []
    )
    return IncidentOnCall(
        incident=incident,
        team=routed.team,
        policy=routed.policy,
        why=routed.why_parts(),
        schedules=[(s, oncall[s.pk]) for s in team_schedules],
        escalation=escalation,
        pages=pages,
    )


# --- schedules: overrides and swaps --------------------------------------------------------
def override_get(*, override_id: int) -> Override | None:
    if not in_range(override_id):
        return None
    return (
        Override.objects.select_related("schedule", "user", "replaces", "created_by")
        .filter(pk=override_id)
        .first()
    )


def swap_get(*, swap_id: int) -> ShiftSwap | None:
    if not in_range(swap_id):
        return None
    return (
        ShiftSwap.objects.select_related("schedule", "requester", "taker")
        .filter(pk=swap_id)
        .first()
    )


# --- my contact methods --------------------------------------------------------------------
def contact_methods_mine(*, user_id: int) -> QuerySet[ContactMethod]:
    return ContactMethod.objects.filter(user_id=user_id).order_by("position", "pk")


def contact_method_mine(*, user_id: int, method_id: int) -> ContactMethod | None:
    """One of the person's own methods (someone else's is not at this address: None)."""
    if not in_range(method_id):
        return None
    return contact_methods_mine(user_id=user_id).filter(pk=method_id).first()


# --- heartbeats and maintenance windows ----------------------------------------------------
def heartbeat_list() -> QuerySet[Heartbeat]:
    return Heartbeat.objects.select_related("team", "incident").order_by("name", "pk")


def heartbeat_by_slug(slug: str) -> Heartbeat | None:
    return heartbeat_list().filter(slug=slug).first()


def window_get(*, window_id: int) -> MaintenanceWindow | None:
    if not in_range(window_id):
        return None
    return (
        MaintenanceWindow.objects.select_related("team", "created_by").filter(pk=window_id).first()
    )
