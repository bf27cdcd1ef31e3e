"""CSV export of every report table: the same selectors as the page, without the page's
row caps, and with cells made safe for spreadsheets."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.db import transaction

from postmortems.models import ItemCategory
from postmortems.reports import selectors
from postmortems.reports.filters import ReportFilters

# A cell starting with one of these is run as a formula by Excel/LibreOffice/Sheets
# (OWASP "CSV injection"); titles and usernames are user input, so they get a quote.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

Rows = tuple[list[str], Iterable[list[Any]]]


def safe_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _when(value: datetime | None, f: ReportFilters) -> str:
    return value.astimezone(f.zone).isoformat(timespec="seconds") if value else ""


def _seconds(value) -> str:
    return "" if value is None else f"{value.total_seconds():.0f}"


def open_by_owner(f: ReportFilters) -> Rows:
    cats = ItemCategory.values
    rows = (
        [r.owner or "(unassigned)", *(r.by_category.get(c, 0) for c in cats), r.total,
         r.in_progress, r.overdue]
        for r in selectors.open_by_owner(filters=f)
    )  # fmt: skip
    return ["owner", *cats, "open_total", "in_progress", "overdue"], rows


def overdue(f: ReportFilters) -> Rows:
    header = ["item", "title", "owner", "category", "priority", "status", "due_date",
              "days_overdue", "incident", "namespace", "runbook"]  # fmt: skip
    rows = (
        [i.pk, i.title, i.owner.get_username() if i.owner else "", i.category, i.priority,
         i.status, i.due_date.isoformat(), i.days_overdue,  # type: ignore[attr-defined]
         i.incident_id, i.namespace, i.runbook]
        for i in selectors.overdue_items(filters=f, limit=None)
    )  # fmt: skip
    return header, rows


def aging(f: ReportFilters) -> Rows:
    return ["age", "open_items"], [list(b) for b in selectors.item_summary(filters=f).aging]


def burndown(f: ReportFilters) -> Rows:
    rows = (
        [p.week.isoformat(), p.week_end.isoformat(), p.created, p.closed, p.open]
        for p in selectors.burndown(filters=f)
    )
    return ["week_start", "week_end", "created", "closed", "open_at_week_end"], rows


def by_severity(f: ReportFilters) -> Rows:
    return ["severity", "incidents"], [
        list(r) for r in selectors.incident_counts(filters=f)["by_severity"]
    ]


def by_category(f: ReportFilters) -> Rows:
    rows = selectors.incident_counts(filters=f)["by_category"]
    return ["category", "title", "incidents"], ([r["category"], r["title"], r["n"]] for r in rows)


def by_runbook(f: ReportFilters) -> Rows:
    rows = selectors.incident_counts(filters=f)["by_runbook"]
    return ["runbook", "title", "category", "incidents"], (
        [r["runbook"], r["title"], r["category"], r["n"]] for r in rows
    )


def response_times(f: ReportFilters) -> Rows:
    header = ["month", "incidents", "acknowledged", "resolved", "mtta_seconds", "mttr_seconds"]
    rows = (
        [m.month.strftime("%Y-%m"), m.incidents, m.acknowledged, m.resolved,
         _seconds(m.mtta), _seconds(m.mttr)]
        for m in selectors.response_times(filters=f)
    )  # fmt: skip
    return header, rows


def missing_postmortems(f: ReportFilters) -> Rows:
    header = ["incident", "title", "severity", "namespace", "runbook", "resolved_at",
              "postmortem_status"]  # fmt: skip
    gaps = selectors.postmortem_gaps(filters=f, limit=None)
    rows = (
        [i.pk, i.title, i.severity, i.namespace, i.runbook, _when(i.resolved_at, f),
         getattr(getattr(i, "postmortem", None), "status", "none")]
        for i in gaps["rows"]
    )  # fmt: skip
    return header, rows


def repeats(f: ReportFilters) -> Rows:
    header = ["incident", "title", "triggered_at", "runbook", "namespace",
              "earlier_incidents_with_open_items", "earlier_open_items",
              "newest_earlier"]  # fmt: skip
    rows = (
        [i.pk, i.title, _when(i.triggered_at, f), i.runbook, i.namespace, i.earlier_count,
         i.earlier_open_items, " ".join(f"#{e.pk}" for e in i.earlier)]
        for i in selectors.repeat_incidents(filters=f, limit=None)["rows"]
    )  # fmt: skip
    return header, rows


TABLES: dict[str, Callable[[ReportFilters], Rows]] = {
    "open-by-owner": open_by_owner,
    "overdue": overdue,
    "aging": aging,
    "burndown": burndown,
    "by-severity": by_severity,
    "by-category": by_category,
    "by-runbook": by_runbook,
    "response-times": response_times,
    "missing-postmortems": missing_postmortems,
    "repeats": repeats,
}


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_stream(table: Callable[[], tuple[list[str], Iterable[Sequence[Any]]]]) -> Iterator[str]:
    """A report table as CSV text, line by line, never one string in memory; `table()`
    gives its header and rows. Also the pager's reports' (pager/reports/csv.py)."""
    # One read-only transaction: inside one, PostgreSQL's cursor hands rows over as it
    # reads them; outside, Django declares it WITH HOLD, which computes every row (a
    # year's, hundreds of thousands) before the first is sent.
    with transaction.atomic():
        header, rows = table()
        writer = csv.writer(_Echo())
        yield writer.writerow(header)
        for row in rows:
            yield writer.writerow([safe_cell(v) for v in row])


def csv_lines(table: str, f: ReportFilters) -> Iterator[str]:
    """The table as CSV text, line by line (streamed: an export of every overdue item
    never sits in memory as one string)."""
    return csv_stream(lambda: TABLES[table](f))


def filename(table: str, f: ReportFilters) -> str:
    # Only our own slug and ISO dates: nothing a user typed reaches the header.
    return f"{table}_{f.start.isoformat()}_{f.end.isoformat()}.csv"
