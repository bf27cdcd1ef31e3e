"""Reads of heartbeats: when each is due, whether it is overdue, the list for the pages."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Case, F, QuerySet, Value, When

from pager.models import Heartbeat, HeartbeatState


def due_at(heartbeat: Heartbeat) -> datetime:
    """When the next check-in is expected (the last one, or its creation, plus the
    interval); the grace comes on top before it counts as missing."""
    since = heartbeat.last_seen_at or heartbeat.created_at
    return since + timedelta(seconds=heartbeat.interval_seconds)


def missing_after(heartbeat: Heartbeat) -> datetime:
    return due_at(heartbeat) + timedelta(seconds=heartbeat.grace_seconds)


def overdue(heartbeat: Heartbeat, at: datetime) -> bool:
    return at > missing_after(heartbeat)


def beating() -> Case:
    """The state a check-in leaves: a heartbeat never seen is now beating; a missing one
    stays missing until the check sends its resolved alert (pager.heartbeats.check)."""
    return Case(
        When(state=HeartbeatState.WAITING, then=Value(HeartbeatState.OK)),
        default=F("state"),
    )


def heartbeat_list(*, team_id: int | None = None) -> QuerySet[Heartbeat]:
    """Every heartbeat with its team and its open incident, missing ones first."""
    qs = Heartbeat.objects.select_related("team", "incident")
    if team_id is not None:
        qs = qs.filter(team_id=team_id)
    missing_first = Case(When(state=HeartbeatState.MISSING, then=Value(0)), default=Value(1))
    return qs.order_by(missing_first, "kind", "name")
