"""Reads of maintenance windows: their occurrences, which are on now, which one covers
an incident (the escalation engine asks before paging), and the incidents opened inside
an occurrence (its summary)."""

from __future__ import annotations

from datetime import datetime, timedelta
from fnmatch import fnmatchcase

from django.db.models import Q, QuerySet
from django.utils import timezone

from incidents.models import Incident
from pager.maintenance.recurrence import Series, series
from pager.models import MaintenanceWindow, Team
from pager.routing import incident_labels, route

# An occurrence's summary lists at most this many incidents (the count says the rest).
SUMMARY_INCIDENTS = 500


def window_series(window: MaintenanceWindow) -> Series:
    return series(
        starts_at=window.starts_at,
        ends_at=window.ends_at,
        recurrence=window.recurrence,
        time_zone=window.time_zone,
    )


def occurrences(
    window: MaintenanceWindow, start: datetime, end: datetime
) -> list[tuple[datetime, datetime]]:
    """The window's occurrences overlapping [start, end), as aware UTC (start, end); a
    cancelled window has none from its cancellation on, and the one it cut short ends
    then."""
    found = window_series(window).between(start, end)
    cancelled = window.cancelled_at
    if cancelled is None:
        return found
    return [(s, min(e, cancelled)) for s, e in found if s < cancelled]


def occurrence_at(window: MaintenanceWindow, at: datetime) -> tuple[datetime, datetime] | None:
    """The occurrence under way at `at`, if any."""
    for s, e in occurrences(window, at, at + timedelta(microseconds=1)):
        if s <= at < e:
            return s, e
    return None


def _maybe_on(at: datetime) -> Q:
    """Windows that can be on at `at` (the occurrences decide)."""
    return (
        Q(starts_at__lte=at)
        & (Q(cancelled_at__isnull=True) | Q(cancelled_at__gt=at))
        & (~Q(recurrence="") | Q(ends_at__gt=at))
    )


def windows_active(at: datetime) -> list[MaintenanceWindow]:
    """The windows on at `at`, the one ending last first; each carries `occurrence`
    (start, end). One query."""
    active = []
    for window in MaintenanceWindow.objects.filter(_maybe_on(at)).select_related("team"):
        found = occurrence_at(window, at)
        if found is not None:
            window.occurrence = found  # type: ignore[attr-defined]
            active.append(window)
    active.sort(key=lambda w: (w.occurrence[1], w.pk), reverse=True)  # type: ignore[attr-defined]
    return active


def matchers_match(matchers: dict[str, str], labels: dict[str, set[str]]) -> bool:
    """Every matcher (a shell pattern per ownership label) matches a value the incident
    has for that label."""
    return all(
        any(fnmatchcase(value, str(pattern)) for value in labels.get(name, ()))
        for name, pattern in (matchers or {}).items()
    )


class _Incident:
    """An incident's route and labels, each read once and only if a window asks."""

    def __init__(self, incident: Incident) -> None:
        self.incident = incident
        self._team: tuple[Team | None] | None = None
        self._labels: dict[str, set[str]] | None = None

    @property
    def team_id(self) -> int | None:
        if self._team is None:
            self._team = (route(self.incident).team,)
        team = self._team[0]
        return team.pk if team is not None else None

    @property
    def labels(self) -> dict[str, set[str]]:
        if self._labels is None:
            self._labels = incident_labels(self.incident)
        return self._labels


def _covers(window: MaintenanceWindow, seen: _Incident) -> bool:
    if window.team_id is not None and seen.team_id != window.team_id:
        return False
    return not window.matchers or matchers_match(window.matchers, seen.labels)


def window_for_incident(incident: Incident, at: datetime) -> MaintenanceWindow | None:
    """The maintenance window covering `incident` at `at` (its team owns the incident, and
    every label matcher matches), or None. The one ending last wins."""
    active = windows_active(at)
    if not active:
        return None
    seen = _Incident(incident)
    for window in active:
        if _covers(window, seen):
            return window
    return None


def incidents_opened_inside(
    window: MaintenanceWindow, start: datetime, end: datetime
) -> list[Incident]:
    """The incidents that opened during one occurrence and that the window covers,
    oldest first."""
    opened = Incident.objects.filter(triggered_at__gte=start, triggered_at__lt=end).order_by(
        "triggered_at", "pk"
    )
    return [inc for inc in opened[:SUMMARY_INCIDENTS] if _covers(window, _Incident(inc))]


def window_list(
    *, team_id: int | None = None, include_past: bool = False
) -> QuerySet[MaintenanceWindow]:
    """Windows for the pages and the API: current and coming ones (and past ones if
    asked), newest first, with their team. A query: callers slice or paginate it."""
    qs = MaintenanceWindow.objects.select_related("team", "created_by")
    if team_id is not None:
        qs = qs.filter(team_id=team_id)
    if not include_past:
        now = timezone.now()
        qs = qs.filter(Q(cancelled_at__isnull=True) & (~Q(recurrence="") | Q(ends_at__gt=now)))
    return qs.order_by("-starts_at", "-pk")
