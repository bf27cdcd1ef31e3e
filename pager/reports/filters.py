"""The report's date range: inclusive dates in the console's time zone (TIME_ZONE),
the last 30 days unless asked. The page parses it leniently (a bad value falls back with
a message, so the page renders); the API refuses it with a 400 (pager/api/reports.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from console.bounds import DATE_RANGE_MESSAGE, clamp_date, parse_date

DEFAULT_DAYS = 30
MAX_DAYS = 366  # a year of pages: the aggregation is in SQL, the cap keeps ranges sane


@dataclass(frozen=True)
class ReportRange:
    start: date
    end: date  # inclusive
    now: datetime = field(default_factory=timezone.now, compare=False)
    errors: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def default(cls, *, now: datetime | None = None) -> ReportRange:
        now = now or timezone.now()
        end = now.astimezone(ZoneInfo(settings.TIME_ZONE)).date()
        return cls(end - timedelta(days=DEFAULT_DAYS - 1), end, now)

    @classmethod
    def of(
        cls, start: date | None, end: date | None, *, now: datetime | None = None
    ) -> ReportRange:
        """The range from optional dates (a missing end is today, a missing start 30 days
        before the end); validated already (the API's serializer)."""
        base = cls.default(now=now)
        end = end or (start + timedelta(days=DEFAULT_DAYS - 1) if start else base.end)
        start = start or end - timedelta(days=DEFAULT_DAYS - 1)
        return cls(start, end, base.now)

    @classmethod
    def from_params(cls, params: Mapping[str, Any], *, now: datetime | None = None) -> ReportRange:
        """Parse GET parameters for the page: a bad value falls back to its default with a
        message that says what was wrong."""
        errors: list[str] = []
        start, end = parse_date(params.get("start")), parse_date(params.get("end"))
        if params.get("start") and start is None:
            errors.append(_("The start date must look like 2026-01-31: using the default."))
        if params.get("end") and end is None:
            errors.append(_("The end date must look like 2026-01-31: using the default."))
        if any(d is not None and clamp_date(d) != d for d in (start, end)):
            errors.append(f"{DATE_RANGE_MESSAGE} Moved the range inside them.")
            start, end = (clamp_date(d) if d else None for d in (start, end))
        if start and end and start > end:
            errors.append(_("The start date was after the end date: swapped them."))
            start, end = end, start
        if start and end and (end - start).days >= MAX_DAYS:
            start = end - timedelta(days=MAX_DAYS - 1)
            errors.append(
                _("Reports cover at most %(days)s days: moved the start date.") % {"days": MAX_DAYS}
            )
        found = cls.of(start, end, now=now)
        return cls(found.start, found.end, found.now, tuple(errors))

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(settings.TIME_ZONE)

    @property
    def zone_name(self) -> str:
        return str(settings.TIME_ZONE)

    @property
    def start_at(self) -> datetime:
        return datetime.combine(self.start, time.min, tzinfo=self.zone)

    @property
    def end_at(self) -> datetime:
        """Exclusive: midnight after the end date, local time."""
        return datetime.combine(self.end + timedelta(days=1), time.min, tzinfo=self.zone)

    @property
    def querystring(self) -> str:
        return urlencode({"start": self.start.isoformat(), "end": self.end.isoformat()})
