"""SQL building blocks of the pager reports: business hours in each team's time zone,
and percentiles of a duration per group.

Kept apart from selectors.py so the selectors read as "which rows, which numbers".
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    DurationField,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    When,
)
from django.db.models.functions import ExtractIsoWeekDay, TruncTime
from django.db.models.lookups import GreaterThanOrEqual, LessThan

from pager.models import Schedule, Team
from postmortems.reports.sql import PercentileCont

UTC_NAME = "UTC"
# SQLite (the single-machine demo) has no percentile_cont: the fallback reads at most this
# many rows (the newest), so the page never loads an unbounded table into Python.
PERCENTILE_FALLBACK_ROWS = 20_000
_HOURS_RE = re.compile(r"\s*([0-9]{1,2}):([0-9]{2})\s*-\s*([0-9]{1,2}):([0-9]{2})\s*")


def business_hours() -> tuple[time, time]:
    """settings.PAGER_BUSINESS_HOURS ("09:00-18:00"): from (inclusive) and until
    (exclusive), Monday to Friday."""
    text = str(settings.PAGER_BUSINESS_HOURS)
    match = _HOURS_RE.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        start, end = time(h1, m1), time(h2, m2)
    except ValueError:
        raise ImproperlyConfigured(
            f"PAGER_BUSINESS_HOURS must look like 09:00-18:00; it is {text!r}."
        ) from None
    if start >= end:
        raise ImproperlyConfigured(
            f"PAGER_BUSINESS_HOURS must start before it ends (no overnight hours): {text!r}."
        )
    return start, end


def _zone_name(name: str | None) -> str:
    if not name:
        return UTC_NAME
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC_NAME
    return name


def team_zones() -> dict[str, list[int]]:
    """Team ids by the time zone of the team's first schedule (by name); UTC for a team
    without one. One query over the teams (configuration: tens of rows, not pages)."""
    first = Schedule.objects.filter(team=OuterRef("pk")).order_by("name", "pk")
    rows = Team.objects.annotate(zone=Subquery(first.values("time_zone")[:1]))
    zones: dict[str, list[int]] = defaultdict(list)
    for pk, zone in rows.order_by().values_list("pk", "zone"):
        zones[_zone_name(zone)].append(pk)
    return dict(zones)


def _outside(column: str, zone: ZoneInfo, hours: tuple[time, time]) -> ExpressionWrapper[Q]:
    weekday = ExtractIsoWeekDay(column, tzinfo=zone)  # 6, 7: Saturday, Sunday
    clock = TruncTime(column, tzinfo=zone)
    start, end = hours
    outside = (
        Q(GreaterThanOrEqual(weekday, 6))
        | Q(LessThan(clock, start))
        | Q(GreaterThanOrEqual(clock, end))
    )
    return ExpressionWrapper(outside, output_field=BooleanField())


def out_of_hours(column: str, team_column: str, zones: dict[str, list[int]]) -> Q:
    """A condition: `column` (a timestamp) falls outside business hours in the zone of
    the team in `team_column`. The clock and weekday are read in SQL per zone (Django's
    Extract/Trunc with tzinfo, so daylight saving time moves with the date); a row whose
    team has no zone (no team, no schedule) is read in UTC."""
    hours = business_hours()
    branches = [
        When(Q(**{f"{team_column}__in": ids}), then=_outside(column, ZoneInfo(name), hours))
        for name, ids in sorted(zones.items())
        if name != UTC_NAME
    ]
    utc = _outside(column, ZoneInfo(UTC_NAME), hours)
    if not branches:
        return Q(utc)
    return Q(Case(*branches, default=utc, output_field=BooleanField()))


# --- percentiles ----------------------------------------------------------------------
def percentile(values: Sequence[timedelta], fraction: float) -> timedelta | None:
    """Linear interpolation between the closest ranks: what PostgreSQL's percentile_cont
    answers, so the fallback and the database agree."""
    if not values:
        return None
    ordered = sorted(values)
    rank = fraction * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def percentile_annotations(
    start: str, end: str, fractions: dict[str, float]
) -> dict[str, PercentileCont]:
    """percentile_cont aggregates of end - start (NULL spans are skipped) for a GROUP BY,
    on PostgreSQL; empty elsewhere (see `percentiles_fallback`)."""
    if connection.vendor != "postgresql":
        return {}
    return {
        name: PercentileCont(F(end) - F(start), fraction=fraction, output_field=DurationField())
        for name, fraction in fractions.items()
    }


def percentiles_fallback(
    qs: QuerySet[Any], group: str, start: str, end: str, fractions: dict[str, float]
) -> dict[Any, dict[str, timedelta | None]]:
    """The same figures in Python for a database without percentile_cont: one query for
    the newest PERCENTILE_FALLBACK_ROWS rows with both timestamps."""
    rows: Iterable[tuple[Any, Any, Any]] = (
        qs.filter(**{f"{start}__isnull": False, f"{end}__isnull": False})
        .order_by(f"-{start}")
        .values_list(group, start, end)[:PERCENTILE_FALLBACK_ROWS]
    )
    spans: dict[Any, list[timedelta]] = defaultdict(list)
    for key, began, ended in rows:
        spans[key].append(ended - began)
    return {
        key: {name: percentile(values, f) for name, f in fractions.items()}
        for key, values in spans.items()
    }
