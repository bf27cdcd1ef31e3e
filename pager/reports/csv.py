"""CSV downloads of the pager reports: the same selectors as the page, every row (the
page caps the exhausted escalations), cells made safe for spreadsheets with the
postmortem reports' helper, durations in seconds."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from pager.reports import selectors
from pager.reports.filters import ReportRange
from postmortems.reports.csv_export import csv_stream

Rows = tuple[list[str], Iterable[list[Any]]]


def _seconds(value: timedelta | None) -> str:
    return "" if value is None else f"{value.total_seconds():.0f}"


def _when(value: datetime | None, r: ReportRange) -> str:
    return value.astimezone(r.zone).isoformat(timespec="seconds") if value else ""


def people(r: ReportRange) -> Rows:
    header = ["username", "pages", "out_of_hours", "acknowledged", "median_ack_seconds",
              "p90_ack_seconds"]  # fmt: skip
    rows = (
        [p.username, p.pages, p.out_of_hours, p.acknowledged, _seconds(p.median_ack),
         _seconds(p.p90_ack)]
        for p in selectors.people(report_range=r)
    )  # fmt: skip
    return header, rows


def teams(r: ReportRange) -> Rows:
    header = ["team", "name", "pages", "out_of_hours", "escalations", "reached_last_step",
              "median_ack_seconds"]  # fmt: skip
    rows = (
        [t.slug, t.name, t.pages, t.out_of_hours, t.escalations, t.exhausted,
         _seconds(t.median_ack)]
        for t in selectors.teams(report_range=r)
    )  # fmt: skip
    return header, rows


def exhausted(r: ReportRange) -> Rows:
    header = ["escalation", "incident", "title", "severity", "team", "policy", "started_at",
              "ended_at", "repeats_run"]  # fmt: skip
    rows = (
        [e.pk, e.incident_id, e.incident.title, e.incident.severity,
         e.team.slug if e.team else "", e.policy.name if e.policy else "",
         _when(e.started_at, r), _when(e.ended_at, r), e.loop]
        for e in selectors.exhausted(report_range=r, limit=None)
    )  # fmt: skip
    return header, rows


TABLES: dict[str, Callable[[ReportRange], Rows]] = {
    "people": people,
    "teams": teams,
    "exhausted": exhausted,
}


def csv_lines(table: str, r: ReportRange) -> Iterator[str]:
    """The table as CSV text, line by line (streamed)."""
    return csv_stream(lambda: TABLES[table](r))


def filename(table: str, r: ReportRange) -> str:
    # Only our own table name and ISO dates: nothing a user typed reaches the header.
    return f"pager-{table}_{r.start.isoformat()}_{r.end.isoformat()}.csv"
