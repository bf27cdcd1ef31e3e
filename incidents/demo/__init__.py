"""Demo history for `make run` (`manage.py seed_demo`): the registry through which the
app that builds it plugs in, and the narrow way its rows leave again.

incidents sits below the apps whose rows the history holds (action runs, postmortems,
drills), so it does not build the history itself: a higher app registers a `DemoPart`
from its AppConfig.ready() (postmortems/demo/ does), and `seed_demo` runs the parts in
`order` to seed and in reverse to reset. Every row a part writes is flagged (`is_demo`
on Incident, DrillPlan and DrillRun; everything else hangs off a demo incident), so a
reset finds exactly those rows and nothing else (purge.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User


@dataclass(frozen=True)
class DemoContext:
    now: datetime
    admin: User  # the demo admin (superuser), who drafts and publishes
    commander: User  # the second person: approves, reviews


@dataclass(frozen=True)
class DemoPart:
    key: str
    order: int
    seed: Callable[[DemoContext], dict[str, Any]]  # returns counts, for the command's output
    reset: Callable[[], dict[str, int]]  # rows deleted, per table
    # Set-up the demo needs on any database, not history (the pager's teams and schedules):
    # run on every start, before the history; the part makes it only where nothing of
    # its kind exists yet, and `--reset` leaves it.
    configure: Callable[[DemoContext], dict[str, Any]] | None = None


_PARTS: dict[str, DemoPart] = {}


def demo_part_register(part: DemoPart) -> None:
    _PARTS[part.key] = part


def demo_parts() -> list[DemoPart]:
    return sorted(_PARTS.values(), key=lambda p: (p.order, p.key))
