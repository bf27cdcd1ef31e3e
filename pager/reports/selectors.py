"""Reads behind the pager reports, shared by the page, the CSV downloads and the API.

What each figure counts (docs/pager.md, "Reports"):
- a page is in the range when it was made (`created_at`) in it; drill incidents are
  left out (rehearsals); the seeded demo history counts, and its share is reported.
  Per person: the pages to that person. Per team: every page of the team's
  escalations (to people and to the team's channel).
- out of hours: made outside settings.PAGER_BUSINESS_HOURS, Monday to Friday, in the
  time zone of the team's first schedule (by name; UTC for a team without one).
- acknowledged: the page has `acknowledged_at` (its incident was acknowledged while the
  page was open); time to acknowledge is `acknowledged_at - created_at`, its median and
  90th percentile (percentile_cont: interpolated between the closest pages).
- escalations: started in the range. Reached the last step: every step and every repeat
  ran and nobody acknowledged: its state is EXHAUSTED, or its timeline says it was (an
  acknowledgement afterwards moves the state on, not the fact).
- a team's time to acknowledge is per escalation: from its start to the first
  acknowledged page (the first `acknowledged_at` of its pages), the median over the
  escalations that paged someone who acknowledged. How long the team took to answer an
  incident, whoever of it was paged first; an acknowledgement that expired and was made
  again later does not stretch it.

Every number is a SQL aggregate grouped by person or team, so the report costs the same
few queries whatever the number of pages (tests/unit/pager/test_reports.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import time, timedelta
from typing import Any

from django.db import connection
from django.db.models import (
    BigIntegerField,
    Count,
    Exists,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.db.models.lookups import Exact

from incidents.models import TimelineEvent
from pager import timeline_kinds
from pager.models import Escalation, EscalationState, Page
from pager.reports import sql
from pager.reports.filters import ReportRange
from postmortems.reports.shapes import human_duration

LIST_LIMIT = 50  # exhausted escalations on the page; the CSV and the API have them all
PERSON_FRACTIONS = {"median_ack": 0.5, "p90_ack": 0.9}
TEAM_FRACTIONS = {"median_ack": 0.5}


@dataclass(frozen=True)
class PersonRow:
    user_id: int
    username: str
    pages: int
    out_of_hours: int
    acknowledged: int
    median_ack: timedelta | None
    p90_ack: timedelta | None

    @property
    def median_ack_text(self) -> str:
        return human_duration(self.median_ack)

    @property
    def p90_ack_text(self) -> str:
        return human_duration(self.p90_ack)


@dataclass(frozen=True)
class TeamRow:
    team_id: int | None  # None: escalations no team owned
    slug: str
    name: str
    pages: int
    out_of_hours: int
    escalations: int
    exhausted: int
    median_ack: timedelta | None

    @property
    def median_ack_text(self) -> str:
        return human_duration(self.median_ack)


@dataclass(frozen=True)
class Report:
    range: ReportRange
    hours: tuple[time, time]
    people: list[PersonRow]
    teams: list[TeamRow]
    exhausted: list[Escalation]  # the newest LIST_LIMIT
    exhausted_total: int
    demo_pages: int = 0  # of `pages`, from the seeded demo history

    @property
    def pages(self) -> int:
        return sum(t.pages for t in self.teams)

    @property
    def out_of_hours(self) -> int:
        return sum(t.out_of_hours for t in self.teams)

    @property
    def escalations(self) -> int:
        return sum(t.escalations for t in self.teams)

    @property
    def is_empty(self) -> bool:
        return not (self.teams or self.people)


# Rehearsals are not anyone's on-call load. The seeded demo history (`seed_demo`) is
# counted, as the postmortem reports count it, and the page says how much of it there is.
_REAL = {"incident__is_drill": False}


def _pages(r: ReportRange) -> QuerySet[Page]:
    qs = Page.objects.filter(created_at__gte=r.start_at, created_at__lt=r.end_at, **_REAL)
    return qs.order_by()


def _escalations(r: ReportRange) -> QuerySet[Escalation]:
    qs = Escalation.objects.filter(started_at__gte=r.start_at, started_at__lt=r.end_at, **_REAL)
    return qs.order_by()


def reached_last_step() -> Q:
    """The escalation ran out of steps: its state, or the escalation engine's timeline
    entry saying so (payload {"what": "exhausted", "escalation": <id>})."""
    key = KeyTextTransform("escalation", "payload")
    if connection.vendor == "postgresql":
        # As text: a cast of the payload to a number could fail on someone else's entry.
        same = Exact(key, Cast(OuterRef("pk"), TextField()))
    else:  # SQLite's json_extract answers a number
        same = Exact(Cast(key, BigIntegerField()), OuterRef("pk"))
    entry = TimelineEvent.objects.filter(
        same, incident_id=OuterRef("incident_id"), kind=timeline_kinds.ESCALATION,
        payload__what="exhausted",
    )  # fmt: skip
    return Q(state=EscalationState.EXHAUSTED) | Q(Exists(entry))


_FIRST_ACK = Subquery(
    Page.objects.filter(escalation_id=OuterRef("pk"), acknowledged_at__isnull=False)
    .order_by("acknowledged_at")
    .values("acknowledged_at")[:1]
)


def _percentiles(
    qs: QuerySet[Any], group: str, start: str, end: str, fractions: dict[str, float]
) -> tuple[dict[str, Any], dict[Any, dict[str, timedelta | None]]]:
    """The percentile aggregates for the GROUP BY (PostgreSQL), or the figures by group
    computed once aside (the fallback): exactly one of the two is non-empty."""
    annotations = sql.percentile_annotations(start, end, fractions)
    if annotations:
        return annotations, {}
    return {}, sql.percentiles_fallback(qs, group, start, end, fractions)


def people(
    *, report_range: ReportRange, zones: dict[str, list[int]] | None = None
) -> list[PersonRow]:
    """Per person paged in the range: one GROUP BY (two without percentile_cont)."""
    zones = sql.team_zones() if zones is None else zones
    qs = _pages(report_range).filter(user__isnull=False)
    aggregates, aside = _percentiles(
        qs, "user_id", "created_at", "acknowledged_at", PERSON_FRACTIONS
    )
    rows = qs.values("user_id", "user__username").annotate(
        n=Count("id"),
        ooh=Count("id", filter=sql.out_of_hours("created_at", "escalation__team_id", zones)),
        acked=Count("acknowledged_at"),
        **aggregates,
    )
    out = []
    for found in rows:
        row: dict[str, Any] = dict(found)
        figures: dict[str, Any] = aside.get(row["user_id"], {}) if aside else row
        out.append(
            PersonRow(
                user_id=row["user_id"],
                username=row["user__username"],
                pages=row["n"],
                out_of_hours=row["ooh"],
                acknowledged=row["acked"],
                median_ack=figures.get("median_ack"),
                p90_ack=figures.get("p90_ack"),
            )
        )
    return sorted(out, key=lambda p: (-p.pages, p.username))


def teams(*, report_range: ReportRange, zones: dict[str, list[int]] | None = None) -> list[TeamRow]:
    """Per team: pages (one GROUP BY) and escalations (another), joined here by team."""
    zones = sql.team_zones() if zones is None else zones
    pages = (
        _pages(report_range)
        .values("escalation__team_id", "escalation__team__slug", "escalation__team__name")
        .annotate(
            n=Count("id"),
            ooh=Count("id", filter=sql.out_of_hours("created_at", "escalation__team_id", zones)),
        )
    )
    escalations = _escalations(report_range).annotate(first_ack=_FIRST_ACK)
    aggregates, aside = _percentiles(
        escalations, "team_id", "started_at", "first_ack", TEAM_FRACTIONS
    )
    started = escalations.values("team_id", "team__slug", "team__name").annotate(
        n=Count("id"), exhausted=Count("id", filter=reached_last_step()), **aggregates
    )
    found: dict[int | None, dict[str, Any]] = {}
    for paged in pages:
        row: dict[str, Any] = dict(paged)
        team = found.setdefault(row["escalation__team_id"], _team(row, "escalation__team"))
        team.update(pages=row["n"], ooh=row["ooh"])
    for began in started:
        row = dict(began)
        team = found.setdefault(row["team_id"], _team(row, "team"))
        figures: dict[str, Any] = aside.get(row["team_id"], {}) if aside else row
        team.update(escalations=row["n"], exhausted=row["exhausted"])
        team["median_ack"] = figures.get("median_ack")
    out = [
        TeamRow(
            team_id=pk,
            slug=t["slug"],
            name=t["name"],
            pages=t["pages"],
            out_of_hours=t["ooh"],
            escalations=t["escalations"],
            exhausted=t["exhausted"],
            median_ack=t["median_ack"],
        )
        for pk, t in found.items()
    ]
    # Escalations no team owned last: they are nobody's load.
    return sorted(out, key=lambda t: (t.team_id is None, -t.pages, t.name))


def _team(row: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {
        "slug": row[f"{prefix}__slug"] or "",
        "name": row[f"{prefix}__name"] or "",
        "pages": 0,
        "ooh": 0,
        "escalations": 0,
        "exhausted": 0,
        "median_ack": None,
    }


def exhausted(
    *, report_range: ReportRange, limit: int | None = LIST_LIMIT
) -> list[Escalation] | Iterator[Escalation]:
    """Escalations started in the range that reached the last step, newest first."""
    qs = (
        _escalations(report_range)
        .filter(reached_last_step())
        .select_related("incident", "team", "policy")
        .order_by("-started_at", "-id")
    )
    return list(qs[:limit]) if limit else qs.iterator(chunk_size=2000)


def report(*, report_range: ReportRange) -> Report:
    """Everything the page and the API show, in a fixed number of queries."""
    zones = sql.team_zones()
    team_rows = teams(report_range=report_range, zones=zones)
    return Report(
        range=report_range,
        hours=sql.business_hours(),
        people=people(report_range=report_range, zones=zones),
        teams=team_rows,
        exhausted=list(exhausted(report_range=report_range)),
        exhausted_total=sum(t.exhausted for t in team_rows),
        demo_pages=_pages(report_range).filter(incident__is_demo=True).count(),
    )
