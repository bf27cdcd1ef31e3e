"""The report filters: a date range (inclusive, in the report's time zone), a namespace
(team), an action-item category and an optional time-zone override, parsed from GET
parameters. A bad value falls back to its default with a message, so the page renders."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from urllib.parse import urlencode
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from console.bounds import DATE_RANGE_MESSAGE, clamp_date, parse_date
from postmortems.models import ItemCategory

DEFAULT_DAYS = 180
MAX_DAYS = 5 * 366  # weekly buckets stay in the hundreds


@dataclass(frozen=True)
class ReportFilters:
    start: date
    end: date  # inclusive
    namespace: str = ""
    category: str = ""
    tz: str = ""  # a zoneinfo key; settings.TIME_ZONE when empty
    now: datetime = field(default_factory=timezone.now, compare=False)
    errors: tuple[str, ...] = field(default=(), compare=False)
    # Chaos-drill incidents are rehearsals: left out of incident reports and MTTA/MTTR
    # unless asked for (?drills=include).
    include_drills: bool = False

    @classmethod
    def from_params(cls, params, *, now: datetime | None = None) -> ReportFilters:
        """Parse GET parameters; a bad value falls back to its default with a message that
        says what was wrong, so the page still renders."""
        now = now or timezone.now()
        errors: list[str] = []
        tz = (params.get("tz") or "").strip()
        if tz and not _valid_zone(tz):
            errors.append(
                _("Unknown time zone %(tz)s: using %(default)s.")
                % {"tz": repr(tz[:60]), "default": settings.TIME_ZONE}
            )
            tz = ""
        today = now.astimezone(ZoneInfo(tz or settings.TIME_ZONE)).date()
        start, end = parse_date(params.get("start")), parse_date(params.get("end"))
        for name in ("start", "end"):
            if params.get(name) and (start if name == "start" else end) is None:
                errors.append(
                    _("The start date must look like 2026-01-31: using the default.")
                    if name == "start"
                    else _("The end date must look like 2026-01-31: using the default.")
                )
        # Year 1 or 9999 would overflow the range's day and week arithmetic: clamp.
        if any(d is not None and clamp_date(d) != d for d in (start, end)):
            errors.append(f"{DATE_RANGE_MESSAGE} Moved the range inside them.")
            start, end = (clamp_date(d) if d else None for d in (start, end))
        end = end or today
        start = start or end - timedelta(days=DEFAULT_DAYS - 1)
        if start > end:
            errors.append(_("The start date was after the end date: swapped them."))
            start, end = end, start
        if (end - start).days >= MAX_DAYS:
            start = end - timedelta(days=MAX_DAYS - 1)
            errors.append(
                _("Reports cover at most %(days)s days: moved the start date.") % {"days": MAX_DAYS}
            )
        category = (params.get("category") or "").strip()
        if category and category not in ItemCategory.values:
            errors.append(
                _("Unknown category %(category)s: showing all categories.")
                % {"category": repr(category[:40])}
            )
            category = ""
        namespace = (params.get("namespace") or "").strip()[:253]
        include_drills = (params.get("drills") or "").strip() in ("include", "1", "on")
        return cls(
            start, end, namespace, category, tz, now, tuple(errors), include_drills=include_drills
        )

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz or settings.TIME_ZONE)

    @property
    def zone_name(self) -> str:
        return self.tz or settings.TIME_ZONE

    @property
    def today(self) -> date:
        return self.now.astimezone(self.zone).date()

    def day_start(self, day: date) -> datetime:
        return datetime.combine(day, time.min, tzinfo=self.zone)

    @property
    def start_at(self) -> datetime:
        return self.day_start(self.start)

    @property
    def end_at(self) -> datetime:
        """Exclusive: midnight after the end date, local time."""
        return self.day_start(self.end + timedelta(days=1))

    def params(self) -> dict[str, str]:
        """The filters as GET parameters (for CSV links and chart drill-downs)."""
        out = {"start": self.start.isoformat(), "end": self.end.isoformat()}
        for key in ("namespace", "category", "tz"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.include_drills:
            out["drills"] = "include"
        return out

    @property
    def querystring(self) -> str:
        return urlencode(self.params())


def _valid_zone(name: str) -> bool:
    if len(name) > 64 or ".." in name or name.startswith("/"):
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True
