"""SQL building blocks for the tracking reports: the median aggregate and the calendar
buckets (weeks, months) the charts are drawn over.

Kept apart from selectors.py so the selectors read as "which rows, which numbers".
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from datetime import date, datetime, timedelta

from django.db import connection
from django.db.models import Aggregate, DurationField, F, QuerySet

# SQLite has no percentile function; the fallback reads at most this many rows (the most
# recently closed), so the embedded demo never loads an unbounded table into Python.
MEDIAN_FALLBACK_ROWS = 20_000


class PercentileCont(Aggregate):
    """PostgreSQL's ordered-set aggregate `percentile_cont(f) WITHIN GROUP (ORDER BY x)`.

    It works on intervals, so the median of (closed_at - created_at) comes back as a
    timedelta without shipping a row per item to Python.
    """

    function = "percentile_cont"
    name = "PercentileCont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"

    def __init__(self, expression, *, fraction: float, **extra):
        # A float literal, formatted here (not a parameter): ordered-set aggregates need a
        # constant direct argument, and it is ours, never user input.
        super().__init__(expression, fraction=f"{float(fraction):.6f}", **extra)


def median_duration(qs: QuerySet, start_field: str, end_field: str) -> timedelta | None:
    """Median of end - start over `qs` (rows where either is NULL are skipped)."""
    qs = qs.filter(**{f"{start_field}__isnull": False, f"{end_field}__isnull": False})
    if connection.vendor == "postgresql":
        span = F(end_field) - F(start_field)
        agg = PercentileCont(span, fraction=0.5, output_field=DurationField())
        return qs.aggregate(m=agg)["m"]
    # SQLite (the single-machine demo): no percentile_cont, so take a bounded sample of the
    # most recent rows and compute the median in Python.
    rows = qs.order_by(f"-{end_field}").values_list(start_field, end_field)
    spans = [end - start for start, end in rows[:MEDIAN_FALLBACK_ROWS]]
    return statistics.median(spans) if spans else None


# --- calendar buckets -----------------------------------------------------------------
def week_starts(start: date, end: date) -> Iterator[date]:
    """Mondays of every ISO week that overlaps [start, end] (what TruncWeek returns)."""
    day = start - timedelta(days=start.weekday())
    while day <= end:
        yield day
        day += timedelta(days=7)


def month_starts(start: date, end: date) -> Iterator[date]:
    """First days of every month that overlaps [start, end] (what TruncMonth returns)."""
    day = start.replace(day=1)
    while day <= end:
        yield day
        day = (day + timedelta(days=32)).replace(day=1)


def bucket_key(value: datetime | date | None, tz) -> date | None:
    """A Trunc* result as a local date: Django returns it aware in `tz`; normalise anyway
    so a backend returning UTC cannot shift a bucket by a day."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(tz).date() if value.tzinfo else value.date()
    return value
