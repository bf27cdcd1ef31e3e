"""Maintenance windows: occurrences of a recurring window across daylight-saving changes,
which window covers an incident, validation that names the problem, and the summary
written once per occurrence (timeline lines, the team's channel)."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from console import roles
from console.errors import DomainError, NotAllowed
from incidents.models import TimelineEvent
from notifications.models import Target, TargetKind
from pager.maintenance.selectors import (
    occurrence_at,
    occurrences,
    window_for_incident,
    windows_active,
)
from pager.maintenance.services import summaries_write, window_cancel, window_create
from pager.models import MaintenanceSummary, MaintenanceWindow, Ownership, Team
from pager.timeline_kinds import MAINTENANCE
from tests.factories import IncidentFactory
from tests.pager_receivers import smtp  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


@pytest.fixture
def commander(make_user):
    return make_user("carol", roles.COMMANDER)


@pytest.fixture
def teams():
    infer = Team.objects.create(slug="infer", name="Inference")
    gpu = Team.objects.create(slug="gpu", name="GPU fleet")
    Ownership.objects.create(team=infer, namespace="llm-prod-*")
    Ownership.objects.create(team=gpu, namespace="gpu-*")
    return infer, gpu


def window(commander, **kw):
    now = timezone.now()
    fields = {
        "name": "Driver upgrade",
        "team_id": None,
        "matchers": {"namespace": "llm-prod-*"},
        "starts_at": now + timedelta(hours=1),
        "ends_at": now + timedelta(hours=3),
        "recurrence": "",
        "time_zone": "UTC",
        "reason": "CUDA 12.8 on every node",
        "actor": commander,
    }
    return window_create(**{**fields, **kw})


def local(occurrence, zone):
    return [t.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z") for t in occurrence]


# --- occurrences ----------------------------------------------------------------------------
def test_a_weekly_window_keeps_its_wall_clock_time_across_both_dst_changes():
    w = MaintenanceWindow(
        name="Tuesday patching",
        starts_at=datetime(2026, 3, 17, 2, 0, tzinfo=BERLIN),
        ends_at=datetime(2026, 3, 17, 4, 0, tzinfo=BERLIN),
        recurrence="RRULE:FREQ=WEEKLY;BYDAY=TU",
        time_zone="Europe/Berlin",
    )
    found = occurrences(w, datetime(2026, 3, 20, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC))
    # Summer time began on 29 March: 02:00 local is 01:00 UTC before, 00:00 UTC after.
    assert [local(o, BERLIN) for o in found] == [
        ["2026-03-24 02:00 CET", "2026-03-24 04:00 CET"],
        ["2026-03-31 02:00 CEST", "2026-03-31 04:00 CEST"],
    ]
    assert [o[0].hour for o in found] == [1, 0]
    assert all(e - s == timedelta(hours=2) for s, e in found)
    autumn = occurrences(w, datetime(2026, 10, 20, tzinfo=UTC), datetime(2026, 11, 1, tzinfo=UTC))
    assert [local(o, BERLIN)[0] for o in autumn] == [
        "2026-10-20 02:00 CEST",
        "2026-10-27 02:00 CET",
    ]


def test_each_occurrence_lasts_as_long_as_the_first_even_on_the_short_night():
    """A daily 01:30-03:30 window in New York: on the night the clocks skip 02:00-03:00
    it still lasts two hours (absolute), ending 04:30 local."""
    w = MaintenanceWindow(
        starts_at=datetime(2026, 3, 1, 1, 30, tzinfo=NEW_YORK),
        ends_at=datetime(2026, 3, 1, 3, 30, tzinfo=NEW_YORK),
        recurrence="FREQ=DAILY",
        time_zone="America/New_York",
    )
    (night,) = occurrences(
        w, datetime(2026, 3, 8, 5, tzinfo=UTC), datetime(2026, 3, 8, 7, tzinfo=UTC)
    )
    assert local(night, NEW_YORK) == ["2026-03-08 01:30 EST", "2026-03-08 04:30 EDT"]


def test_the_first_occurrence_counts_even_off_the_rule_and_until_and_count_end_it():
    w = MaintenanceWindow(
        starts_at=datetime(2026, 6, 1, 22, 0, tzinfo=UTC),  # a Monday
        ends_at=datetime(2026, 6, 1, 23, 0, tzinfo=UTC),
        recurrence="FREQ=WEEKLY;BYDAY=WE;COUNT=2",
        time_zone="UTC",
    )
    found = occurrences(w, datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC))
    assert [s.day for s, _ in found] == [1, 3, 10]
    w.recurrence = "FREQ=DAILY;UNTIL=20260603T235959Z"
    found = occurrences(w, datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC))
    assert [s.day for s, _ in found] == [1, 2, 3]


def test_a_cancelled_window_stops_and_the_occurrence_under_way_ends_then():
    start = datetime(2026, 6, 1, 22, 0, tzinfo=UTC)
    w = MaintenanceWindow(
        starts_at=start, ends_at=start + timedelta(hours=2), recurrence="FREQ=DAILY",
        time_zone="UTC", cancelled_at=start + timedelta(days=2, hours=1),
    )  # fmt: skip
    found = occurrences(w, start, start + timedelta(days=10))
    assert len(found) == 3
    assert found[-1] == (start + timedelta(days=2), start + timedelta(days=2, hours=1))


# --- which window covers an incident ----------------------------------------------------------
def test_a_window_covers_the_incidents_its_team_owns_and_its_labels_match(commander, teams):
    infer, gpu = teams
    now = timezone.now()
    team_window = window(commander, team_id=infer.pk, matchers={})
    label_window = window(commander, name="llama only", matchers={"namespace": "llm-prod-llama"})
    inside = now + timedelta(hours=2)
    ours = IncidentFactory(namespace="llm-prod-mixtral")
    llama = IncidentFactory(namespace="llm-prod-llama")
    theirs = IncidentFactory(namespace="gpu-a100")
    assert window_for_incident(ours, inside) == team_window
    assert window_for_incident(llama, inside) in (team_window, label_window)
    assert window_for_incident(theirs, inside) is None
    assert window_for_incident(ours, now) is None  # not started yet
    assert window_for_incident(ours, now + timedelta(hours=4)) is None  # over
    assert {w.pk for w in windows_active(inside)} == {team_window.pk, label_window.pk}

    gpu_window = window(commander, name="GPU", team_id=gpu.pk, matchers={"namespace": "llm-*"})
    assert window_for_incident(theirs, inside) is None  # the team's, but the label does not match
    assert gpu_window in windows_active(inside)

    window_cancel(window_id=team_window.pk, actor=commander)
    window_cancel(window_id=label_window.pk, actor=commander)
    assert window_for_incident(ours, inside) is None


def test_the_window_ending_last_wins(commander):
    now = timezone.now()
    short = window(commander, name="short", ends_at=now + timedelta(hours=2))
    long = window(commander, name="long", ends_at=now + timedelta(hours=5))
    incident = IncidentFactory(namespace="llm-prod-x")
    assert window_for_incident(incident, now + timedelta(minutes=90)) == long
    assert occurrence_at(short, now + timedelta(minutes=90)) is not None


# --- planning ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"recurrence": "FREQ=SOMETIMES"}, "repeat rule cannot be used"),
        ({"recurrence": "FREQ=MINUTELY"}, "FREQ=MINUTELY repeats too often"),
        ({"recurrence": "BYDAY=TU"}, "FREQ is missing"),
        ({"recurrence": "DTSTART:20260101T000000Z;FREQ=DAILY"}, "leave DTSTART out"),
        ({"recurrence": "FREQ=HOURLY"}, "would begin before the one before it ends"),
        ({"time_zone": "Mars/Olympus"}, "Unknown time zone"),
        ({"matchers": {}}, "Choose a team or at least one label"),
        ({"matchers": {"pod": "x"}}, "'pod' is not a label a window can match"),
        ({"ends_at": timezone.now() + timedelta(minutes=30)}, "must end after it starts"),
        ({"starts_at": timezone.now() - timedelta(hours=3),
          "ends_at": timezone.now() - timedelta(hours=1)}, "would already have ended"),
        ({"name": ""}, "needs a name"),
    ],
)  # fmt: skip
def test_a_window_that_cannot_work_is_refused_with_the_reason(commander, changes, says):
    with pytest.raises(DomainError, match=says):
        window(commander, **changes)
    assert not MaintenanceWindow.objects.exists()


def test_only_managers_plan_windows(make_user):
    with pytest.raises(NotAllowed):
        window(make_user("rita", roles.RESPONDER))


def test_a_recurring_window_may_start_in_the_past(commander):
    start = timezone.now() - timedelta(days=7, hours=1)
    w = window(commander, starts_at=start, ends_at=start + timedelta(hours=2),
               recurrence="FREQ=WEEKLY", time_zone="Europe/Berlin")  # fmt: skip
    assert occurrence_at(w, timezone.now()) is not None


# --- the summary ------------------------------------------------------------------------------
def test_each_occurrence_gets_one_summary_on_the_timeline_and_in_the_channel(
    commander,
    teams,
    smtp,  # noqa: F811
):
    infer, _ = teams
    infer.channel = Target.objects.create(
        name="infer-mail", kind=TargetKind.EMAIL, recipients="infer-oncall@example.com"
    )
    infer.save()
    now = timezone.now()
    w = window(commander, name="Driver upgrade", team_id=infer.pk, matchers={},
               starts_at=now + timedelta(hours=1), ends_at=now + timedelta(hours=3))  # fmt: skip
    opened = now + timedelta(hours=1, minutes=5)
    resolved = IncidentFactory(namespace="llm-prod-a", triggered_at=opened, status="resolved")
    still_open = IncidentFactory(namespace="llm-prod-b", triggered_at=now + timedelta(hours=2))
    IncidentFactory(namespace="gpu-a", triggered_at=now + timedelta(hours=2))  # not the team's
    IncidentFactory(namespace="llm-prod-c", triggered_at=now + timedelta(hours=4))  # after

    assert summaries_write(now=now + timedelta(hours=2)) == 0  # under way
    assert summaries_write(now=now + timedelta(hours=3, minutes=1)) == 1
    summary = MaintenanceSummary.objects.get()
    assert summary.window == w
    assert summary.incident_ids == [resolved.pk, still_open.pk]
    assert "2 incidents opened inside it, 1 still open; nobody was paged" in summary.text
    assert f"#{still_open.pk} " in summary.text
    events = TimelineEvent.objects.filter(kind=MAINTENANCE).order_by("incident_id")
    assert [e.incident_id for e in events] == [resolved.pk, still_open.pk]
    assert events[0].message == (
        "Maintenance window Driver upgrade ended; this incident opened inside it and "
        "nobody was paged."
    )
    assert events[0].source == "pager"
    assert events[0].payload["msg"] == [["pager.maintenance_ended", {"window": "Driver upgrade"}]]
    (mail,) = smtp.mails
    assert mail.recipients == ["infer-oncall@example.com"]
    assert "Maintenance window Driver upgrade ended: 2 incidents" in mail.subject
    assert "still open" in mail.text()

    # Once: the next runs find it written.
    assert summaries_write(now=now + timedelta(hours=3, minutes=2)) == 0
    assert MaintenanceSummary.objects.count() == 1
    assert TimelineEvent.objects.filter(kind=MAINTENANCE).count() == 2
    assert len(smtp.mails) == 1


def test_a_window_cancelled_midway_gets_its_summary_and_a_channel_failure_changes_nothing(
    commander, teams
):
    infer, _ = teams
    infer.channel = Target.objects.create(
        name="infer-hook", kind=TargetKind.WEBHOOK, url="http://127.0.0.1:9/hook",
        secret="s3cret-s3cret-s3cret",
    )  # fmt: skip
    infer.save()
    start = timezone.now() - timedelta(days=1)
    w = window(commander, team_id=infer.pk, matchers={}, starts_at=start,
               ends_at=start + timedelta(hours=2), recurrence="FREQ=DAILY")  # fmt: skip
    MaintenanceWindow.objects.filter(pk=w.pk).update(created_at=start - timedelta(minutes=1))
    w.refresh_from_db()
    # The occurrence under way (since start + 1 day) is cut short now.
    assert occurrence_at(w, timezone.now()) is not None
    window_cancel(window_id=w.pk, actor=commander)
    # Yesterday's and today's cut-short occurrence; the refused webhook is only logged.
    assert summaries_write() == 2
    assert MaintenanceSummary.objects.count() == 2
    assert summaries_write() == 0
