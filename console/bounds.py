"""Bounds for ids and dates that arrive from people (query strings, forms, API bodies).

Every filter parses through here, so an id beyond PostgreSQL's bigint or a date at the
edge of the calendar is refused with a message (API) or dropped/clamped with a message
(pages) instead of overflowing in the database or in date arithmetic (a 500).
"""

from __future__ import annotations

import re
from datetime import date

from rest_framework import serializers

MAX_ID = 2**63 - 1  # PostgreSQL bigint, the type of every primary key
# ASCII digits only: str.isdigit() also accepts "²" and other digits int() refuses.
_ID_RE = re.compile(r"#?([0-9]{1,19})")

# Reports add and subtract days and weeks and shift by time zones; these margins keep
# that arithmetic inside Python's date range (year 1 to 9999).
DATE_MIN = date(1970, 1, 1)
DATE_MAX = date(9998, 12, 31)
DATE_RANGE_MESSAGE = f"Dates must be between {DATE_MIN.isoformat()} and {DATE_MAX.isoformat()}."


def parse_id(value: object) -> int | None:
    """An id ("42" or "#42") from a query string or form field, or None when it is not
    one: not ASCII digits, or beyond bigint (no row can have it)."""
    match = _ID_RE.fullmatch(str(value if value is not None else "").strip())
    if match is None:
        return None
    number = int(match.group(1))
    return number if number <= MAX_ID else None


def clamp_date(value: date) -> date:
    return min(max(value, DATE_MIN), DATE_MAX)


def parse_date(value: object) -> date | None:
    """An ISO date (2026-01-31) from a query string, or None when it is not one. Dates
    outside DATE_MIN..DATE_MAX are returned as they are: callers clamp with a message."""
    text = str(value or "").strip()
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


class IdField(serializers.IntegerField):
    """A primary key in a query string or body: 1 .. 2**63-1, else 400 naming the field."""

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(**kwargs)


class BoundedDateField(serializers.DateField):
    """A date the reports and overdue arithmetic can use: DATE_MIN .. DATE_MAX."""

    def to_internal_value(self, value):
        parsed = super().to_internal_value(value)
        if not DATE_MIN <= parsed <= DATE_MAX:
            raise serializers.ValidationError(DATE_RANGE_MESSAGE)
        return parsed
