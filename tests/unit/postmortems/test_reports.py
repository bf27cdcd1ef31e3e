"""Tracking-report numbers checked against a small hand-computed dataset.

The dataset (all times UTC; "now" is Wed 2026-05-20 12:00; the report covers
2026-01-01..2026-04-30, so February has no incident):

  incident  triggered          sev   runbook      ns      ack     resolved  postmortem
  I0        2025-12-01 10:00   SEV3  nccl-hang    team-a  +5m     +1h       -        (before range)
  I1        2026-01-10 10:00   SEV1  ttft-spike   team-a  +5m     +2h       published
  I2        2026-01-31 23:30   SEV2  nccl-hang    team-a  +10m    +1h       draft    (Feb in Tokyo)
  I3        2026-03-05 08:00   SEV2  ttft-spike   team-b  +20m    +4h       -
  I4        2026-04-02 12:00   SEV3  ecc-errors   team-a  +4m     -         -
  I5        2026-04-20 09:00   SEV1  ttft-spike   team-a  -       -         -

  item  incident  status       owner  category    created           closed            due
  A1    I1        open         alice  monitoring  2026-01-11 10:00  -                 2026-02-01
  A2    I1        in_progress  bob    automation  2026-01-11 10:00  -                 2026-06-30
  A3    I1        done         alice  config      2026-01-11 10:00  2026-01-21 10:00  2026-03-01
  A4    I1        wont_do      bob    drill       2026-01-11 10:00  2026-01-12 10:00  2026-03-01
  A5    I2        done         alice  monitoring  2026-02-02 00:00  2026-02-06 00:00  2026-03-01
  A6    I2        done         -      process     2026-02-02 00:00  2026-03-04 00:00  2026-03-01
  A7    I3        done         bob    capacity    2026-03-06 00:00  2026-05-10 00:00  2026-06-01
  A8    I3        open         -      capacity    2026-05-15 00:00  -                 2026-05-19
  A9    I4        open         alice  config      2026-04-03 10:00  -                 2026-04-10
  A10   I4        in_progress  carol  monitoring  2026-04-25 00:00  -                 2026-05-01
  A11   I0        done         alice  process     2025-12-02 00:00  2025-12-20 00:00  2026-01-01
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection

from console import roles
from incidents.models import Incident
from postmortems.models import ActionItem, Postmortem
from postmortems.reports import charts, selectors, sql
from postmortems.reports.filters import ReportFilters

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)
RANGE = {"start": "2026-01-01", "end": "2026-04-30"}
MIN, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)


def at(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def filters(**params) -> ReportFilters:
    return ReportFilters.from_params({**RANGE, **params}, now=NOW)


@pytest.fixture
def dataset(make_user):
    users = {name: make_user(name, roles.RESPONDER) for name in ("alice", "bob", "carol")}
    incidents = {}
    rows = [
        ("I0", at(2025, 12, 1, 10), "SEV3", "nccl-hang", "team-a", 5 * MIN, HOUR),
        ("I1", at(2026, 1, 10, 10), "SEV1", "ttft-spike", "team-a", 5 * MIN, 2 * HOUR),
        ("I2", at(2026, 1, 31, 23, 30), "SEV2", "nccl-hang", "team-a", 10 * MIN, HOUR),
        ("I3", at(2026, 3, 5, 8), "SEV2", "ttft-spike", "team-b", 20 * MIN, 4 * HOUR),
        ("I4", at(2026, 4, 2, 12), "SEV3", "ecc-errors", "team-a", 4 * MIN, None),
        ("I5", at(2026, 4, 20, 9), "SEV1", "ttft-spike", "team-a", None, None),
    ]
    for name, t, sev, runbook, ns, ack, res in rows:
        status = "resolved" if res else ("acknowledged" if ack else "triggered")
        incidents[name] = Incident.objects.create(
            title=f"{name} {runbook}", severity=sev, status=status, grouping_key=name,
            runbook=runbook, namespace=ns, triggered_at=t, started_at=t,
            acknowledged_at=t + ack if ack else None, resolved_at=t + res if res else None,
        )  # fmt: skip
    alice = users["alice"]
    Postmortem.objects.create(
        incident=incidents["I1"], title="I1", status="published", created_by=alice,
        published_at=at(2026, 1, 12), published_by=alice,
    )  # fmt: skip
    Postmortem.objects.create(incident=incidents["I2"], title="I2", created_by=alice)
    items = [
        ("A1", "I1", "open", "alice", "monitoring", at(2026, 1, 11, 10), None, date(2026, 2, 1)),
        ("A2", "I1", "in_progress", "bob", "automation", at(2026, 1, 11, 10), None,
         date(2026, 6, 30)),
        ("A3", "I1", "done", "alice", "config", at(2026, 1, 11, 10), at(2026, 1, 21, 10),
         date(2026, 3, 1)),
        ("A4", "I1", "wont_do", "bob", "drill", at(2026, 1, 11, 10), at(2026, 1, 12, 10),
         date(2026, 3, 1)),
        ("A5", "I2", "done", "alice", "monitoring", at(2026, 2, 2), at(2026, 2, 6),
         date(2026, 3, 1)),
        ("A6", "I2", "done", None, "process", at(2026, 2, 2), at(2026, 3, 4), date(2026, 3, 1)),
        ("A7", "I3", "done", "bob", "capacity", at(2026, 3, 6), at(2026, 5, 10), date(2026, 6, 1)),
        ("A8", "I3", "open", None, "capacity", at(2026, 5, 15), None, date(2026, 5, 19)),
        ("A9", "I4", "open", "alice", "config", at(2026, 4, 3, 10), None, date(2026, 4, 10)),
        ("A10", "I4", "in_progress", "carol", "monitoring", at(2026, 4, 25), None,
         date(2026, 5, 1)),
        ("A11", "I0", "done", "alice", "process", at(2025, 12, 2), at(2025, 12, 20),
         date(2026, 1, 1)),
    ]  # fmt: skip
    made = {}
    for name, inc, status, owner, cat, created, closed, due in items:
        i = incidents[inc]
        made[name] = ActionItem.objects.create(
            title=f"{name} follow-up", owner=users.get(owner), due_date=due, category=cat,
            status=status, incident=i, namespace=i.namespace, runbook=i.runbook,
            created_by=alice, created_at=created, closed_at=closed,
        )  # fmt: skip
    return {"incidents": incidents, "items": made, "users": users}


# --- action items ---------------------------------------------------------------------
def test_item_summary_matches_hand_computed_numbers(dataset):
    s = selectors.item_summary(filters=filters())
    assert (s.open, s.in_progress, s.open_total, s.overdue) == (3, 2, 5, 4)
    # A8 5 days old, A10 25, A9 47, A1 and A2 129.
    assert s.aging == [("0-7 days", 1), ("8-30 days", 1), ("31-90 days", 1), ("over 90 days", 2)]
    # Created in range: A1-A7, A9, A10 = 9; done A3 A5 A6 A7; A4 won't do: 4 / (9 - 1).
    assert (s.created, s.done, s.wont_do) == (9, 4, 1)
    assert s.completion_rate == 0.5
    assert s.completion_pct == "50%"
    # Done and closed in range: A3 10 d, A5 4 d, A6 30 d (A7 closed in May, A11 in Dec).
    assert s.median_close == timedelta(days=10)
    assert s.median_close_text == "10 d 0 h"


def test_median_fallback_without_percentile_cont_gives_the_same_answer(dataset, monkeypatch):
    qs = ActionItem.objects.filter(status="done")
    on_db = sql.median_duration(qs, "created_at", "closed_at")
    monkeypatch.setattr(connection, "vendor", "sqlite")  # take the bounded Python path
    assert sql.median_duration(qs, "created_at", "closed_at") == on_db
    assert sql.median_duration(qs.none(), "created_at", "closed_at") is None


def test_open_by_owner_pivots_by_category_unassigned_last(dataset):
    rows = selectors.open_by_owner(filters=filters())
    got = [(r.owner, r.by_category, r.total, r.in_progress, r.overdue) for r in rows]
    assert got == [
        ("alice", {"monitoring": 1, "config": 1}, 2, 0, 2),
        ("bob", {"automation": 1}, 1, 1, 0),
        ("carol", {"monitoring": 1}, 1, 1, 1),
        ("", {"capacity": 1}, 1, 0, 1),
    ]
    # cells follow ItemCategory order: monitoring, automation, drill, config, capacity, process
    assert rows[0].cells == [1, 0, 0, 1, 0, 0]


def test_overdue_list_is_oldest_first_with_days_late(dataset):
    got = [(i.title, i.days_overdue) for i in selectors.overdue_items(filters=filters())]
    assert got == [
        ("A1 follow-up", 108),
        ("A9 follow-up", 40),
        ("A10 follow-up", 19),
        ("A8 follow-up", 1),
    ]
    assert len(selectors.overdue_items(filters=filters(), limit=2)) == 2


def test_burndown_counts_open_items_at_each_week_end(dataset):
    points = selectors.burndown(filters=filters())
    # Mondays from 2025-12-29 to 2026-04-27: 18 weeks; the last ends on the range's end.
    assert len(points) == 18
    assert (points[0].week, points[-1].week, points[-1].week_end) == (
        date(2025, 12, 29),
        date(2026, 4, 27),
        date(2026, 4, 30),
    )
    changes = {p.week: (p.created, p.closed, p.open) for p in points if p.created or p.closed}
    assert changes == {
        date(2026, 1, 5): (4, 0, 4),  # A1-A4
        date(2026, 1, 12): (0, 1, 3),  # A4 won't do
        date(2026, 1, 19): (0, 1, 2),  # A3 done
        date(2026, 2, 2): (2, 1, 3),  # A5, A6 created; A5 done
        date(2026, 3, 2): (1, 1, 3),  # A6 done; A7 created
        date(2026, 3, 30): (1, 0, 4),  # A9
        date(2026, 4, 20): (1, 0, 5),  # A10
    }
    assert [p.open for p in points][:2] == [0, 4]  # A11 was opened and closed before
    assert points[-1].open == 5


# --- incidents ------------------------------------------------------------------------
def test_incident_counts_by_severity_runbook_and_category(dataset):
    c = selectors.incident_counts(filters=filters())
    assert c["total"] == 5
    assert c["by_severity"] == [("SEV1", 2), ("SEV2", 2), ("SEV3", 1), ("SEV4", 0)]
    assert [(r["runbook"], r["category"], r["n"]) for r in c["by_runbook"]] == [
        ("ttft-spike", "scheduling", 3),
        ("ecc-errors", "resource", 1),
        ("nccl-hang", "communication", 1),
    ]
    assert [(r["category"], r["n"]) for r in c["by_category"]] == [
        ("scheduling", 3),
        ("communication", 1),
        ("resource", 1),
    ]


def test_mtta_mttr_by_month_with_the_empty_month_as_a_gap(dataset):
    months = selectors.response_times(filters=filters())
    got = [(m.month, m.incidents, m.mtta, m.mttr) for m in months]
    assert got == [
        (date(2026, 1, 1), 2, 7.5 * MIN, 1.5 * HOUR),  # I1 and I2
        (date(2026, 2, 1), 0, None, None),  # no incident: a gap, not a zero
        (date(2026, 3, 1), 1, 20 * MIN, 4 * HOUR),
        (date(2026, 4, 1), 2, 4 * MIN, None),  # I5 unacknowledged; neither resolved
    ]
    fig = charts.response_times(charts_report(dataset))
    assert fig["data"][0]["y"] == [7.5, None, 20.0, 4.0]
    assert fig["data"][1]["y"] == [90.0, None, 240.0, None]


def test_month_buckets_follow_the_report_time_zone(dataset):
    """I2 at 23:30 UTC on Jan 31 is Feb 1, 08:30 in Tokyo."""
    utc = {m.month: m.incidents for m in selectors.response_times(filters=filters(tz="UTC"))}
    tokyo = selectors.response_times(filters=filters(tz="Asia/Tokyo"))
    assert utc[date(2026, 1, 1)] == 2
    assert utc[date(2026, 2, 1)] == 0
    assert [(m.month.month, m.incidents, m.mtta) for m in tokyo[:2]] == [
        (1, 1, 5 * MIN),
        (2, 1, 10 * MIN),
    ]


def test_postmortem_completion_lists_resolved_without_published(dataset):
    p = selectors.postmortem_gaps(filters=filters())
    assert (p["resolved"], p["published"], p["missing"]) == (3, 1, 2)
    assert [i.title for i in p["rows"]] == ["I3 ttft-spike", "I2 nccl-hang"]  # latest first


def test_repeat_incidents_name_the_earlier_incident_with_open_items(dataset):
    r = selectors.repeat_incidents(filters=filters())
    assert r["count"] == 2  # I2 repeats I0, but I0's items are all done: not a repeat
    got = [
        (i.title, i.earlier_count, i.earlier_open_items,
         [(e.title, e.open_items) for e in i.earlier])
        for i in r["rows"]
    ]  # fmt: skip
    assert got == [
        ("I5 ttft-spike", 2, 3, [("I3 ttft-spike", 1), ("I1 ttft-spike", 2)]),
        ("I3 ttft-spike", 1, 2, [("I1 ttft-spike", 2)]),
    ]


def test_finishing_the_fix_ends_the_repeat(dataset):
    ActionItem.objects.filter(incident=dataset["incidents"]["I1"]).update(status="done")
    rows = selectors.repeat_incidents(filters=filters())["rows"]
    assert [(i.title, [e.title for e in i.earlier]) for i in rows] == [
        ("I5 ttft-spike", ["I3 ttft-spike"])
    ]


# --- filters --------------------------------------------------------------------------
def test_namespace_filter_narrows_items_incidents_and_repeats(dataset):
    f = filters(namespace="team-b")
    s = selectors.item_summary(filters=f)
    assert (s.open_total, s.overdue, s.created, s.done) == (1, 1, 1, 1)  # A8; A7
    assert selectors.incident_counts(filters=f)["total"] == 1
    assert selectors.repeat_incidents(filters=f)["count"] == 0  # I1 is team-a's
    rows = selectors.repeat_incidents(filters=filters(namespace="team-a"))["rows"]
    assert [(i.title, i.earlier_open_items, [e.title for e in i.earlier]) for i in rows] == [
        ("I5 ttft-spike", 2, ["I1 ttft-spike"])
    ]


def test_category_filter_narrows_action_items(dataset):
    s = selectors.item_summary(filters=filters(category="monitoring"))
    assert (s.open_total, s.overdue, s.created, s.done) == (2, 2, 3, 1)  # A1 A10; A5 done
    rows = selectors.repeat_incidents(filters=filters(category="capacity"))["rows"]
    assert [(i.title, [e.title for e in i.earlier]) for i in rows] == [
        ("I5 ttft-spike", ["I3 ttft-spike"])
    ]
    # Incident counts ignore the action-item category.
    assert selectors.incident_counts(filters=filters(category="monitoring"))["total"] == 5


def test_filter_defaults_and_bad_values():
    f = ReportFilters.from_params({}, now=NOW)
    assert (f.start, f.end, f.namespace, f.category, f.errors) == (
        date(2025, 11, 22), date(2026, 5, 20), "", "", ()
    )  # fmt: skip
    assert (f.end - f.start).days == 179  # 180 days, both ends included
    bad = ReportFilters.from_params(
        {"start": "2026-13-01", "end": "2026-02-01", "tz": "Mars/Olympus", "category": "x"},
        now=NOW,
    )
    assert bad.tz == ""
    assert bad.zone_name == "UTC"
    assert bad.category == ""
    assert bad.end == date(2026, 2, 1)
    assert bad.start == date(2025, 8, 6)
    assert len(bad.errors) == 3
    swapped = ReportFilters.from_params({"start": "2026-04-30", "end": "2026-01-01"}, now=NOW)
    assert (swapped.start, swapped.end) == (date(2026, 1, 1), date(2026, 4, 30))
    assert ReportFilters.from_params({"tz": "../../etc/passwd"}, now=NOW).tz == ""
    tokyo = ReportFilters.from_params({**RANGE, "tz": "Asia/Tokyo"}, now=NOW)
    assert tokyo.start_at == datetime(2025, 12, 31, 15, tzinfo=UTC)
    assert tokyo.end_at == datetime(2026, 4, 30, 15, tzinfo=UTC)


def test_charts_are_plotly_figures(dataset):
    figs = charts.all_charts(charts_report(dataset))
    for fig in figs.values():
        assert set(fig) == {"data", "layout"}
        assert fig["data"]
    burn = figs["chart-burndown"]["data"][0]
    assert burn["y"][-1] == 5
    assert burn["x"][-1] == "2026-04-30"
    sev = figs["chart-by-severity"]["data"][0]
    assert (sev["x"], sev["y"]) == (["SEV1", "SEV2", "SEV3", "SEV4"], [2, 2, 1, 0])
    open_cat = figs["chart-open-by-category"]["data"][0]
    assert (
        dict(zip(open_cat["x"], open_cat["y"], strict=True))["Monitoring"] == 2
    )  # the label, not the id


def charts_report(dataset):
    return selectors.report(filters=filters())
