"""Pager report figures checked against hand-built pages with known times.

Business hours 09:00-18:00, Monday to Friday. The range is 2026-10-19..2026-10-31 (UTC),
across the weekend Europe/Berlin leaves summer time (Sunday 25 October, 03:00 CEST ->
02:00 CET). Team "infer" has two schedules: "primary" (Europe/Berlin, first by name) and
"secondary" (Asia/Tokyo); team "train" has none (UTC).

  page  to       escalation  created (UTC)      local                     ack    hours
  P1    alice    E1 infer    Fri 23 15:30       17:30 CEST                +1m    in
  P2    alice    E1 infer    Fri 23 16:30       18:30 CEST                +2m    out
  P3    alice    E2 infer    Sat 24 10:00       12:00 CEST (weekend)      +3m    out
  P4    alice    E3 infer    Mon 26 07:30       08:30 CET                 +4m    out
  P5    alice    E3 infer    Mon 26 08:30       09:30 CET                 +10m   in
  P6    bob      E4 train    Mon 26 08:30       08:30 UTC                 +5m    out
  P7    bob      E4 train    Tue 27 12:00       12:00 UTC                 -      in
  P8    carol    E5 (none)   Wed 28 20:00       20:00 UTC                 -      out
  P9    channel  E3 infer    Thu 29 12:00       13:00 CET                 -      in
  P10   alice    E6 infer    Sat 10 October     (before the range)

A fixed +2 offset would call P4 in hours, a fixed +1 P2; Tokyo (the second schedule)
would call P1 out of hours.

  escalation  team   started (UTC)   state         first page acknowledged
  E1          infer  Fri 23 15:30    acknowledged  +1m (P1)
  E2          infer  Sat 24 10:00    acknowledged  +3m (P3), after it reached the last
                                                   step (its timeline says so)
  E3          infer  Mon 26 07:30    acknowledged  +4m (P4)
  E4          train  Mon 26 08:30    acknowledged  +5m (P6)
  E5          -      Wed 28 20:00    exhausted     -
  E6          infer  Sat 10 October  exhausted     -   (before the range)
  E7          infer  Tue 27 03:00    exhausted     a drill's (with a page to bob): left out
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from incidents.models import Incident
from incidents.services.timeline import incident_event_record
from pager.models import Escalation, Page, Schedule, Team
from pager.reports import selectors, sql
from pager.reports.filters import ReportRange

pytestmark = pytest.mark.django_db

MIN = timedelta(minutes=1)
NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
RANGE = {"start": "2026-10-19", "end": "2026-10-31"}


def at(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def report_range(**params) -> ReportRange:
    return ReportRange.from_params({**RANGE, **params}, now=NOW)


@pytest.fixture(autouse=True)
def _hours(settings):
    settings.PAGER_BUSINESS_HOURS = "09:00-18:00"
    settings.TIME_ZONE = "UTC"


def make_incident(n: int, started: datetime, title: str = "") -> Incident:
    return Incident.objects.create(
        title=title or f"I{n} vLLM TTFT high", severity="SEV2", status="triggered",
        grouping_key=f"report-{n}", runbook="ttft-spike", namespace="llm-serving",
        triggered_at=started, started_at=started,
    )  # fmt: skip


def make_escalation(n, team, started, state, title="") -> Escalation:
    escalation = Escalation.objects.create(
        incident=make_incident(n, started, title), team=team, state=state, started_at=started,
    )  # fmt: skip
    if state == "exhausted":
        reached_last_step(escalation)
    return escalation


def reached_last_step(escalation: Escalation) -> None:
    """The escalation engine's timeline entry when it runs out of steps."""
    incident_event_record(
        incident_id=escalation.incident_id, kind="escalation", source="pager",
        message="Reached the last step; nobody acknowledged.",
        payload={"what": "exhausted", "escalation": escalation.pk},
    )  # fmt: skip


def make_page(escalation, user, created, acked=None, channel=None) -> Page:
    recipient = f"u{user.pk}" if user else "c0"
    return Page.objects.create(
        escalation=escalation, incident_id=escalation.incident_id, user=user, channel=channel,
        key=f"{escalation.incident_id}:0:0:0:{created.timestamp():.0f}:{recipient}",
        step_position=0, due_at=created, created_at=created,
        status="acknowledged" if acked else "delivered",
        acknowledged_at=created + acked if acked else None,
    )  # fmt: skip


@pytest.fixture
def dataset(make_user):
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    infer = Team.objects.create(slug="infer", name="Inference")
    train = Team.objects.create(slug="train", name="Training")
    Schedule.objects.create(team=infer, slug="infer-2", name="secondary", time_zone="Asia/Tokyo")
    Schedule.objects.create(team=infer, slug="infer-1", name="primary", time_zone="Europe/Berlin")
    e1 = make_escalation(1, infer, at(2026, 10, 23, 15, 30), "acknowledged")
    e2 = make_escalation(2, infer, at(2026, 10, 24, 10), "acknowledged", "=cmd|' /C calc'!A0")
    reached_last_step(e2)  # then acknowledged: the state moved on, the fact stays
    e3 = make_escalation(3, infer, at(2026, 10, 26, 7, 30), "acknowledged")
    e4 = make_escalation(4, train, at(2026, 10, 26, 8, 30), "acknowledged")
    e5 = make_escalation(5, None, at(2026, 10, 28, 20), "exhausted")
    e6 = make_escalation(6, infer, at(2026, 10, 10, 3), "exhausted")
    make_page(e1, alice, at(2026, 10, 23, 15, 30), 1 * MIN)
    make_page(e1, alice, at(2026, 10, 23, 16, 30), 2 * MIN)
    make_page(e2, alice, at(2026, 10, 24, 10), 3 * MIN)
    make_page(e3, alice, at(2026, 10, 26, 7, 30), 4 * MIN)
    make_page(e3, alice, at(2026, 10, 26, 8, 30), 10 * MIN)
    make_page(e4, bob, at(2026, 10, 26, 8, 30), 5 * MIN)
    make_page(e4, bob, at(2026, 10, 27, 12))
    make_page(e5, carol, at(2026, 10, 28, 20))
    make_page(e3, None, at(2026, 10, 29, 12))
    make_page(e6, alice, at(2026, 10, 10, 3), 1 * MIN)
    # A drill that paged (PAGER_PAGE_DRILLS) and reached the last step: not counted.
    drill = make_escalation(7, infer, at(2026, 10, 27, 3), "exhausted")
    Incident.objects.filter(pk=drill.incident_id).update(is_drill=True)
    make_page(drill, bob, at(2026, 10, 27, 3), 1 * MIN)
    return {"infer": infer, "train": train, "e2": e2, "e5": e5}


def test_per_person_figures(dataset):
    rows = {p.username: p for p in selectors.people(report_range=report_range())}
    assert set(rows) == {"alice", "bob", "carol"}
    alice = rows["alice"]
    assert (alice.pages, alice.out_of_hours, alice.acknowledged) == (5, 3, 5)
    # 1, 2, 3, 4, 10 minutes: median 3 min; p90 at rank 3.6: 4 + 0.6 * 6 = 7.6 min.
    assert alice.median_ack == 3 * MIN
    assert alice.p90_ack == timedelta(seconds=456)
    bob = rows["bob"]
    assert (bob.pages, bob.out_of_hours, bob.acknowledged) == (2, 1, 1)
    assert bob.median_ack == bob.p90_ack == 5 * MIN
    carol = rows["carol"]
    assert (carol.pages, carol.out_of_hours, carol.acknowledged) == (1, 1, 0)
    assert carol.median_ack is None
    assert carol.p90_ack is None
    # Most paged first.
    assert [p.username for p in selectors.people(report_range=report_range())] == [
        "alice", "bob", "carol"
    ]  # fmt: skip


def test_per_team_figures(dataset):
    rows = selectors.teams(report_range=report_range())
    assert [t.slug for t in rows] == ["infer", "train", ""]  # no team last
    infer, train, none = rows
    assert (infer.pages, infer.out_of_hours, infer.escalations, infer.exhausted) == (6, 3, 3, 1)
    assert infer.median_ack == 3 * MIN  # escalations' first acknowledged page: 1, 3, 4 min
    assert (train.pages, train.out_of_hours, train.escalations, train.exhausted) == (2, 1, 1, 0)
    assert train.median_ack == 5 * MIN
    assert none.team_id is None
    assert (none.pages, none.out_of_hours, none.escalations, none.exhausted) == (1, 1, 1, 1)
    assert none.median_ack is None


def test_report_totals_and_exhausted_list(dataset):
    report = selectors.report(report_range=report_range())
    assert (report.pages, report.out_of_hours, report.escalations) == (9, 5, 5)
    assert report.exhausted_total == 2
    assert [e.pk for e in report.exhausted] == [dataset["e5"].pk, dataset["e2"].pk]
    assert not report.is_empty


def _out_of_hours_pages(team: Team) -> set[str]:
    """Labels (P1..) of the team's pages in range that count as out of hours."""
    labels = {at(2026, 10, 23, 15, 30): "P1", at(2026, 10, 23, 16, 30): "P2",
              at(2026, 10, 24, 10): "P3", at(2026, 10, 26, 7, 30): "P4",
              at(2026, 10, 26, 8, 30): "P5", at(2026, 10, 29, 12): "P9"}  # fmt: skip
    r = report_range()
    pages = Page.objects.filter(
        sql.out_of_hours("created_at", "escalation__team_id", sql.team_zones()),
        escalation__team=team, created_at__gte=r.start_at, created_at__lt=r.end_at,
        incident__is_drill=False,
    )  # fmt: skip
    return {labels[p.created_at] for p in pages}


def test_out_of_hours_follows_the_teams_first_schedule_across_the_dst_change(dataset, settings):
    infer = dataset["infer"]
    # Europe/Berlin: Friday 18:30 CEST, the weekend, and Monday 08:30 CET (UTC+1 now).
    assert _out_of_hours_pages(infer) == {"P2", "P3", "P4"}
    # The first schedule by name decides: Asia/Tokyo once it sorts first.
    Schedule.objects.filter(slug="infer-2").update(name="a-first")
    # Tokyo (UTC+9): Friday 15:30Z is Saturday 00:30, Thursday 12:00Z is 21:00.
    assert _out_of_hours_pages(infer) == {"P1", "P2", "P3", "P9"}
    # No schedule: UTC.
    Schedule.objects.filter(team=infer).delete()
    assert _out_of_hours_pages(infer) == {"P3", "P4", "P5"}
    settings.PAGER_BUSINESS_HOURS = "08:00-17:00"
    assert _out_of_hours_pages(infer) == {"P3", "P4"}


def test_business_hours_setting_is_checked(settings):
    from django.core.exceptions import ImproperlyConfigured

    for bad in ("9-18", "18:00-09:00", "25:00-26:00", ""):
        settings.PAGER_BUSINESS_HOURS = bad
        with pytest.raises(ImproperlyConfigured, match="PAGER_BUSINESS_HOURS"):
            sql.business_hours()


def test_an_empty_range_is_an_empty_report(dataset):
    report = selectors.report(report_range=report_range(start="2025-01-01", end="2025-01-31"))
    assert report.is_empty
    assert (report.pages, report.exhausted_total, report.exhausted) == (0, 0, [])


def test_the_python_percentile_agrees_with_postgresql(dataset):
    if connection.vendor != "postgresql":
        pytest.skip("percentile_cont is PostgreSQL's")
    r = report_range()
    pages = Page.objects.filter(
        created_at__gte=r.start_at, created_at__lt=r.end_at, incident__is_drill=False
    )
    aside = sql.percentiles_fallback(
        pages.filter(user__isnull=False), "user_id", "created_at", "acknowledged_at",
        selectors.PERSON_FRACTIONS,
    )  # fmt: skip
    for person in selectors.people(report_range=r):
        figures = aside.get(person.user_id, {})
        assert figures.get("median_ack") == person.median_ack
        assert figures.get("p90_ack") == person.p90_ack


def test_range_defaults_to_the_last_30_days_and_explains_bad_input():
    r = ReportRange.from_params({}, now=NOW)
    assert (r.start.isoformat(), r.end.isoformat()) == ("2026-11-06", "2026-12-05")
    r = ReportRange.from_params({"start": "nope", "end": "2026-10-31"}, now=NOW)
    assert (r.start.isoformat(), r.end.isoformat()) == ("2026-10-02", "2026-10-31")
    assert r.errors
    r = ReportRange.from_params({"start": "2026-10-31", "end": "2026-10-01"}, now=NOW)
    assert (r.start.isoformat(), r.end.isoformat()) == ("2026-10-01", "2026-10-31")
    r = ReportRange.from_params({"start": "2020-01-01", "end": "2026-10-31"}, now=NOW)
    assert (r.end - r.start).days == 365
    assert r.errors


# --- cost -----------------------------------------------------------------------------
def _bulk(n: int, users, teams, base: int) -> None:
    start = at(2026, 10, 19, 0)
    escalations = [
        make_escalation(base + k, teams[k % 3], start + k * 7 * MIN,
                        ("acknowledged", "exhausted")[k % 2])
        for k in range(max(3, n // 4))
    ]  # fmt: skip
    Page.objects.bulk_create(
        Page(
            escalation=escalations[k % len(escalations)],
            incident_id=escalations[k % len(escalations)].incident_id,
            user=users[k % len(users)], key=f"bulk-{base}-{k}", step_position=k % 3,
            due_at=start + k * 37 * MIN, created_at=start + k * 37 * MIN,
            acknowledged_at=start + k * 37 * MIN + (k % 7 + 1) * MIN if k % 3 else None,
        )
        for k in range(n)
    )  # fmt: skip


def _queries(r: ReportRange) -> int:
    with CaptureQueriesContext(connection) as ctx:
        report = selectors.report(report_range=r)
        list(report.exhausted)
    return len(ctx.captured_queries)


def test_query_count_does_not_grow_with_pages(make_user):
    users = [make_user(f"u{k}") for k in range(6)]
    teams = [Team.objects.create(slug=f"t{k}", name=f"T{k}") for k in range(2)] + [None]
    Schedule.objects.create(team=teams[0], slug="t0", name="t0", time_zone="America/New_York")
    r = report_range()
    _bulk(10, users, teams, 1000)
    small = _queries(r)
    _bulk(100, users, teams, 2000)
    assert Page.objects.count() == 110
    assert _queries(r) == small
    # zones, people, team pages, team escalations, the exhausted list, the demo share
    # (+2 without percentile_cont: the fallback reads the spans aside).
    assert small <= (6 if connection.vendor == "postgresql" else 8)
