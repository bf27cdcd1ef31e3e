"""The reads behind the pager's pages, each a fixed number of queries (plus what the
schedule arithmetic costs per schedule). The schedules, escalation and maintenance
arithmetic is the other packages' (pager/schedules/, pager/routing.py, pager/maintenance/);
this module only gathers rows for the pages."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404

from incidents.models import OPEN_STATUSES, Incident
from pager.maintenance.selectors import occurrences, window_list, windows_active
from pager.models import (
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
    SwapState,
    Team,
)
from pager.schedules.selectors import oncall_now_and_next_many
from pager.schedules.shifts import OnCall

RECENT_SWAPS = timedelta(days=14)
WINDOW_LOOKAHEAD = timedelta(days=60)  # the next occurrence of a repeating window


@dataclass
class ScheduleNow:
    schedule: Schedule
    oncall: OnCall


@dataclass
class TeamRow:
    team: Team
    schedules: list[ScheduleNow]
    incidents: list[Incident] = field(default_factory=list)
    windows: list[MaintenanceWindow] = field(default_factory=list)


def _steps() -> Prefetch:
    return Prefetch(
        "steps", queryset=EscalationStep.objects.select_related("schedule", "user", "team")
    )


def policy_default() -> EscalationPolicy | None:
    return EscalationPolicy.objects.filter(is_default=True).prefetch_related(_steps()).first()


def _open_incidents_by_team(team_ids: list[int]) -> dict[int, list[Incident]]:
    """Open incidents the pager routed to each team (its latest escalation's team)."""
    rows = (
        Escalation.objects.filter(team_id__in=team_ids, incident__status__in=OPEN_STATUSES)
        .select_related("incident")
        .order_by("incident_id", "-episode")
    )
    by_team: dict[int, list[Incident]] = defaultdict(list)
    seen: set[int] = set()
    for escalation in rows:
        if escalation.incident_id in seen:
            continue
        seen.add(escalation.incident_id)
        if escalation.team_id is not None:
            by_team[escalation.team_id].append(escalation.incident)
    for incidents in by_team.values():
        incidents.sort(key=lambda i: i.triggered_at, reverse=True)
    return by_team


def teams_overview(*, at: datetime) -> list[TeamRow]:
    teams = list(
        Team.objects.select_related("escalation_policy").prefetch_related(
            Prefetch("schedules", queryset=Schedule.objects.order_by("name"))
        )
    )
    by_team = _open_incidents_by_team([t.pk for t in teams])
    windows: dict[int | None, list[MaintenanceWindow]] = defaultdict(list)
    for window in windows_active(at):
        windows[window.team_id].append(window)
    # Every team's schedules read together: a fixed number of queries however many.
    oncall = oncall_now_and_next_many([s for t in teams for s in t.schedules.all()], at)
    return [
        TeamRow(
            team=team,
            schedules=[ScheduleNow(schedule=s, oncall=oncall[s.pk]) for s in team.schedules.all()],
            incidents=by_team.get(team.pk, []),
            windows=windows.get(team.pk, []),
        )
        for team in teams
    ]


def team_get(slug: str) -> Team:
    queryset = Team.objects.select_related("escalation_policy", "escalation_policy__team")
    team = get_object_or_404(queryset, slug=slug)
    if team.escalation_policy_id is not None:
        policy = (
            EscalationPolicy.objects.select_related("team")
            .prefetch_related(_steps())
            .get(pk=team.escalation_policy_id)
        )
        team.escalation_policy = policy
    return team


def team_schedules(team: Team) -> list[Schedule]:
    return list(team.schedules.order_by("name"))


def team_overrides(team: Team, *, at: datetime) -> list[Override]:
    """Overrides, taken shifts and accepted swaps not over yet, soonest first."""
    return list(
        Override.objects.filter(schedule__team=team, ends_at__gt=at, cancelled_at__isnull=True)
        .select_related("schedule", "user", "replaces", "created_by")
        .order_by("starts_at")[:100]
    )


def team_swaps(team: Team, *, at: datetime) -> list[ShiftSwap]:
    """Open requests not over yet, and the ones decided in the last two weeks."""
    return list(
        ShiftSwap.objects.filter(schedule__team=team)
        .filter(
            Q(state=SwapState.OPEN, ends_at__gt=at)
            | Q(decided_at__gte=at - RECENT_SWAPS)
            | Q(state=SwapState.OPEN, created_at__gte=at - RECENT_SWAPS)
        )
        .select_related("schedule", "requester", "taker")
        .order_by("starts_at")[:100]
    )


def team_heartbeats(team: Team) -> list[Heartbeat]:
    return list(team.heartbeats.order_by("name"))


@dataclass
class WindowRow:
    window: MaintenanceWindow
    active: bool
    next_start: datetime | None
    next_end: datetime | None


def windows_upcoming(*, at: datetime, team: Team | None = None) -> list[WindowRow]:
    """Windows not cancelled that are on now or will be, with their current or next
    occurrence; the ones in force first."""
    rows = []
    for window in window_list(team_id=team.pk if team is not None else None)[:100]:
        spans = occurrences(window, at, at + WINDOW_LOOKAHEAD)
        current = [(s, e) for s, e in spans if s <= at < e]
        upcoming = current or [(s, e) for s, e in spans if e > at]
        if not upcoming:
            continue
        start, end = upcoming[0]
        rows.append(WindowRow(window=window, active=bool(current), next_start=start, next_end=end))
    rows.sort(key=lambda r: (not r.active, r.next_start))
    return rows


def pages_list(
    *, team_id: int | None = None, user_id: int | None = None, status: str = ""
) -> QuerySet[Page]:
    """Newest first, each with its deliveries in the order they were tried."""
    queryset = Page.objects.select_related(
        "incident", "user", "channel", "escalation", "escalation__team"
    ).prefetch_related(Prefetch("deliveries", queryset=PageDelivery.objects.order_by("position")))
    if team_id is not None:
        queryset = queryset.filter(escalation__team_id=team_id)
    if user_id is not None:
        queryset = queryset.filter(user_id=user_id)
    if status:
        queryset = queryset.filter(status=status)
    return queryset.order_by("-created_at", "-pk")


def heartbeats_all() -> list[Heartbeat]:
    return list(Heartbeat.objects.select_related("team", "incident").order_by("kind", "name"))
