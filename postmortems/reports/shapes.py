"""The shapes the report selectors return: small dataclasses the page, the CSV export and
the chart builders all read, with the display helpers templates cannot compute."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.utils.translation import gettext as _

from postmortems.models import ItemCategory
from postmortems.reports.filters import ReportFilters

# Also the CSV values (English); the page translates them (postmortem_text.age_bucket).
AGE_BUCKETS = ("0-7 days", "8-30 days", "31-90 days", "over 90 days")


def human_duration(value: timedelta | None) -> str:
    """ "2 d 3 h", "1 h 05 min", "4 min 10 s"; "—" when there is nothing to show."""
    if value is None:
        return "—"
    seconds = max(0, round(value.total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = {"d": days, "h": hours, "m": minutes, "mm": f"{minutes:02d}", "s": secs}
    parts["ss"] = f"{secs:02d}"
    # Shown on the page only (the CSV has minutes as numbers): the viewer's language.
    if days:
        return _("%(d)s d %(h)s h") % parts
    if hours:
        return _("%(h)s h %(mm)s min") % parts
    if minutes:
        return _("%(m)s min %(ss)s s") % parts
    return _("%(s)s s") % parts


def minutes(value: timedelta | None) -> float | None:
    return None if value is None else round(value.total_seconds() / 60, 2)


@dataclass
class ItemSummary:
    open: int
    in_progress: int
    overdue: int
    aging: list[tuple[str, int]]
    created: int
    done: int
    wont_do: int
    median_close: timedelta | None

    @property
    def open_total(self) -> int:
        return self.open + self.in_progress

    @property
    def completion_rate(self) -> float | None:
        """done / (created - won't do): a dropped item neither helps nor hurts."""
        counted = self.created - self.wont_do
        return self.done / counted if counted else None

    @property
    def completion_pct(self) -> str:
        rate = self.completion_rate
        return "—" if rate is None else f"{rate * 100:.0f}%"

    @property
    def median_close_text(self) -> str:
        return human_duration(self.median_close)


@dataclass
class OwnerRow:
    owner: str  # "" = unassigned
    by_category: dict[str, int] = field(default_factory=dict)
    total: int = 0
    in_progress: int = 0
    overdue: int = 0

    @property
    def cells(self) -> list[int]:
        """Counts in ItemCategory order (templates cannot index a dict by a variable)."""
        return [self.by_category.get(c, 0) for c in ItemCategory.values]


@dataclass(frozen=True)
class BurnPoint:
    week: date  # Monday (local)
    week_end: date  # Sunday, or the range's end date for the last, partial week
    created: int
    closed: int
    open: int


@dataclass(frozen=True)
class EarlierIncident:
    """An incident with open action items, named as the one a repeat follows."""

    pk: int
    title: str
    triggered_at: datetime
    open_items: int


@dataclass(frozen=True)
class MonthTimes:
    month: date
    incidents: int
    acknowledged: int
    resolved: int
    mtta: timedelta | None
    mttr: timedelta | None

    @property
    def mtta_text(self) -> str:
        return human_duration(self.mtta)

    @property
    def mttr_text(self) -> str:
        return human_duration(self.mttr)


@dataclass
class Report:
    filters: ReportFilters
    items: ItemSummary
    owners: list[OwnerRow]
    overdue: list[Any]
    burndown: list[BurnPoint]
    incidents: dict
    months: list[MonthTimes]
    postmortems: dict
    repeats: dict
    namespaces: list[str]

    @property
    def has_items(self) -> bool:
        """Any action item touches this view: open now, or created/closed in range."""
        i = self.items
        return bool(i.open_total or i.created or any(p.closed or p.open for p in self.burndown))
