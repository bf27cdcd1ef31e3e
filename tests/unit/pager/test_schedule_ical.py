"""An imported iCal calendar as a schedule's lowest layer, and the export feeds.

tests/fixtures/pager/oncall_berlin.ics (hand-written) says the weekly Berlin rotation of
test_schedule_rotation.py with three repeating events (RRULE weekly, interval 3, from
Mondays 09:00 Europe/Berlin, with a VTIMEZONE), so the same table holds, except where
the calendar changes it:
  - alice ("Alice": the SUMMARY, any case) every third week from 03-02, her 04-13 week
    removed by an EXDATE: nobody then;
  - bob (SUMMARY) every third week from 03-09; his 03-30 week given to
    "Carol@Example.com" by a RECURRENCE-ID: carol then;
  - carol (SUMMARY "On call", nobody; her ATTENDEE mailto: address) from 03-16;
  - "mallory", who does not exist, on 03-25 for an hour: left out and reported.
"""

from datetime import UTC, datetime, time
from pathlib import Path

import icalendar
import pytest
from django.urls import reverse
from django.utils import timezone

from console import roles
from pager.models import Rotation, RotationMember, Schedule, Team
from pager.schedules import ical_export, selectors, services
from pager.schedules.ical_import import IcalError
from pager.schedules.rotation import wall_clock_stored
from pager.tasks import schedules as schedule_tasks
from tests.unit.console.outgoing_servers import Recorder

pytestmark = pytest.mark.django_db

with open(Path(__file__).parents[2] / "fixtures" / "pager" / "oncall_berlin.ics", newline="") as f:
    CALENDAR = f.read()  # CRLF line ends, as RFC 5545 has them


def local(text: str) -> datetime:
    """A naive wall-clock time: what a rotation's handoff and a restriction are."""
    return datetime.fromisoformat(text)


def z(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def clock(monkeypatch):
    class Clock:
        at = z("2026-03-20 12:00")

    monkeypatch.setattr(timezone, "now", lambda: Clock.at)
    return Clock


@pytest.fixture
def people(make_user):
    return {
        name: make_user(name, role, email=f"{name}@example.com")
        for name, role in [
            ("alice", roles.RESPONDER),
            ("bob", roles.RESPONDER),
            ("carol", roles.RESPONDER),
            ("dave", roles.RESPONDER),
            ("mia", roles.COMMANDER),
        ]
    }


@pytest.fixture
def schedule(people):
    team = Team.objects.create(slug="inference", name="Inference")
    team.members.set([people[n] for n in ("alice", "bob", "carol", "dave")])
    return Schedule.objects.create(
        team=team, slug="primary", name="Primary", time_zone="Europe/Berlin"
    )


@pytest.fixture
def server():
    recorder = Recorder()
    recorder.body = CALENDAR.encode()
    yield recorder
    recorder.close()


def who(schedule: Schedule, at: str) -> tuple[str, str]:
    found = selectors.oncall_at(schedule, z(at))
    return (found[0].username, found[0].source) if found else ("nobody", "")


TABLE = {
    "2026-03-23 08:00": ("alice", "ical"),  # 09:00 CET
    "2026-03-25 11:30": ("alice", "ical"),  # mallory's hour: nobody by that name
    "2026-03-30 06:59": ("alice", "ical"),  # 08:59 CEST: her week was 6 days 23 h
    "2026-03-30 07:00": ("carol", "ical"),  # bob's week, moved by RECURRENCE-ID
    "2026-04-06 07:00": ("carol", "ical"),  # her own week
    "2026-04-13 07:00": ("nobody", ""),  # alice's week, removed by EXDATE
    "2026-04-20 07:00": ("bob", "ical"),
    "2026-10-19 07:00": ("alice", "ical"),  # 09:00 CEST, week 33 (33 % 3 = 0)
    "2026-10-26 07:59": ("alice", "ical"),  # 08:59 CET: her week was 7 days 1 h
    "2026-10-26 08:00": ("bob", "ical"),  # 09:00 CET
}


def test_the_calendar_gives_the_table_and_reports_unknown_names(clock, people, schedule):
    problems = services.schedule_ical_upload(
        schedule_id=schedule.pk, text=CALENDAR, actor=people["mia"]
    )
    schedule.refresh_from_db()
    assert [(p.names, p.events) for p in problems] == [(("mallory",), 1)]
    assert "mallory" in str(problems[0])
    assert {at: who(schedule, at) for at in TABLE} == TABLE
    # carol's two weeks in a row are one shift.
    shifts = selectors.shifts_between(schedule, z("2026-03-29 00:00"), z("2026-04-21 00:00"))
    assert [(s.username, s.starts_at, s.ends_at) for s in shifts] == [
        ("alice", z("2026-03-29 00:00"), z("2026-03-30 07:00")),
        ("carol", z("2026-03-30 07:00"), z("2026-04-13 07:00")),
        ("bob", z("2026-04-20 07:00"), z("2026-04-21 00:00")),
    ]
    assert any("mallory" in text for text in selectors.ical_problems(schedule))


def test_overrides_swaps_and_rotations_sit_above_the_calendar(clock, people, schedule):
    p = people
    services.schedule_ical_upload(schedule_id=schedule.pk, text=CALENDAR, actor=p["mia"])
    schedule.refresh_from_db()
    # dave weekdays 09:00-18:00 from Monday 04-13 (a rotation above the calendar).
    office = Rotation.objects.create(
        schedule=schedule, name="office", frequency="weekly", priority=1,
        starts_at=wall_clock_stored(local("2026-04-13 09:00")),
        restrict_weekdays=[0, 1, 2, 3, 4],
        restrict_start=time(9), restrict_end=time(18),
    )  # fmt: skip
    RotationMember.objects.create(rotation=office, user=p["dave"], position=0)
    services.override_create(
        schedule_id=schedule.pk, user_id=p["dave"].pk, actor=p["mia"],
        starts_at=z("2026-03-28 20:00"), ends_at=z("2026-03-29 04:00"),
    )  # fmt: skip
    swap = services.swap_request(
        schedule_id=schedule.pk, actor=p["carol"],
        starts_at=z("2026-04-01 07:00"), ends_at=z("2026-04-02 07:00"),
    )  # fmt: skip
    services.swap_accept(swap_id=swap.pk, actor=p["bob"])
    expected = {
        "2026-03-28 19:59": ("alice", "ical"),
        "2026-03-29 01:00": ("dave", "override"),  # 03:00 CEST, just after the jump
        "2026-03-29 04:00": ("alice", "ical"),
        "2026-04-01 12:00": ("bob", "swap"),  # carol's calendar week, swapped
        "2026-04-02 07:00": ("carol", "ical"),
        "2026-04-13 07:00": ("dave", "rotation"),  # 09:00 CEST Monday: the office layer
        "2026-04-13 16:00": ("nobody", ""),  # 18:00 CEST: falls through to the gap
        "2026-04-20 12:00": ("dave", "rotation"),  # covers bob's calendar week
        "2026-04-20 17:00": ("bob", "ical"),  # 19:00 CEST: falls through to bob
    }
    assert {at: who(schedule, at) for at in expected} == expected


def test_a_url_is_read_and_stored(clock, schedule, server, settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    schedule.ical_url = f"{server.url}/team.ics?token=s3cret"
    schedule.save()
    outcome = services.schedule_ical_refresh(schedule_id=schedule.pk)
    assert outcome.endswith("read 11 event(s), 1 name(s) nobody has")
    schedule.refresh_from_db()
    assert (schedule.ical_text, schedule.ical_error, schedule.ical_fetched_at) == (
        CALENDAR,
        "",
        clock.at,
    )
    assert [path for path, _host in server.requests] == ["/team.ics?token=s3cret"]
    assert who(schedule, "2026-03-30 07:00") == ("carol", "ical")


def test_only_due_calendars_are_read(clock, people, schedule, server, settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    fresh = Schedule.objects.create(
        team=schedule.team, slug="fresh", name="Fresh", ical_url=f"{server.url}/fresh.ics",
        ical_fetched_at=z("2026-03-20 11:30"), ical_refresh_minutes=60,
    )  # fmt: skip
    Schedule.objects.create(team=schedule.team, slug="none", name="No URL")
    schedule.ical_url = f"{server.url}/due.ics"
    schedule.ical_fetched_at = z("2026-03-20 10:59")
    schedule.save()
    assert services.schedules_ical_refresh_due() == 1
    assert [path for path, _host in server.requests] == ["/due.ics"]
    fresh.refresh_from_db()
    assert fresh.ical_text == ""


def test_a_calendar_too_big_keeps_the_last_good_one(clock, people, schedule, server, settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    services.schedule_ical_upload(schedule_id=schedule.pk, text=CALENDAR, actor=people["mia"])
    schedule.refresh_from_db()
    settings.PAGER_ICAL_MAX_BYTES = 1000  # the calendar is about 2 kB
    schedule.ical_url = f"{server.url}/big.ics"
    schedule.save()
    outcome = services.schedule_ical_refresh(schedule_id=schedule.pk)
    schedule.refresh_from_db()
    assert "larger than 1000 bytes" in outcome
    assert schedule.ical_error == "The calendar at 127.0.0.1 is larger than 1000 bytes."
    assert schedule.ical_text == CALENDAR  # the last good one still counts
    assert who(schedule, "2026-03-23 08:00") == ("alice", "ical")
    with pytest.raises(IcalError, match="larger than 1000 bytes"):
        services.schedule_ical_upload(schedule_id=schedule.pk, text=CALENDAR, actor=people["mia"])


def test_an_internal_url_is_refused_without_the_allowlist(clock, schedule, server):
    schedule.ical_url = f"{server.url}/team.ics"
    schedule.save()
    services.schedule_ical_refresh(schedule_id=schedule.pk)
    schedule.refresh_from_db()
    assert schedule.ical_error.startswith("The calendar's URL is refused:")
    assert "127.0.0.1 is a loopback address" in schedule.ical_error
    assert server.requests == []
    assert schedule.ical_text == ""


def test_an_answer_that_is_not_a_calendar(clock, schedule, server, settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    schedule.ical_url = f"{server.url}/team.ics"
    schedule.save()
    server.status, server.body = 404, b"not here"
    services.schedule_ical_refresh(schedule_id=schedule.pk)
    schedule.refresh_from_db()
    assert schedule.ical_error == "127.0.0.1 answered HTTP 404 instead of the calendar."
    server.status = 200
    services.schedule_ical_refresh(schedule_id=schedule.pk)
    schedule.refresh_from_db()
    assert schedule.ical_error.startswith("This is not an iCal calendar:")


ALICE_RULE = "RRULE:FREQ=WEEKLY;INTERVAL=3\r\nEXDATE"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "The calendar is empty."),
        ("hello", "This is not an iCal calendar: Content line could not be parsed"),
        (CALENDAR.replace(ALICE_RULE, "RRULE:FREQ=SOMETIMES\r\nEXDATE"),
         "VEVENT “Alice” has a broken RRULE"),
        (CALENDAR.replace("DTSTART;TZID=Europe/Berlin:20260309T090000", "DTSTART:2026-03-09"),
         "VEVENT “bob” has a broken DTSTART"),
    ],
)  # fmt: skip
def test_a_broken_calendar_is_refused_with_the_reason(clock, people, schedule, text, says):
    with pytest.raises(IcalError) as refused:
        services.schedule_ical_upload(schedule_id=schedule.pk, text=text, actor=people["mia"])
    assert says in str(refused.value)
    schedule.refresh_from_db()
    assert schedule.ical_text == ""


def test_the_feeds_parse_back_with_the_shifts(clock, people, schedule, client):
    services.schedule_ical_upload(schedule_id=schedule.pk, text=CALENDAR, actor=people["mia"])
    body = client.get(reverse("pager:schedule-feed", args=[schedule.feed_key]))
    assert body.status_code == 200
    assert body["Content-Type"].startswith("text/calendar")
    calendar = icalendar.Calendar.from_ical(body.content)
    events = sorted(
        ((str(e["SUMMARY"]), e.decoded("DTSTART"), e.decoded("DTEND"), str(e["UID"]))
         for e in calendar.walk("VEVENT")),
        key=lambda event: event[1],
    )  # fmt: skip
    # The range: 7 days back from today (03-20) and 60 ahead, on whole UTC days.
    start, end = ical_export.feed_range()
    assert (start, end) == (z("2026-03-13 00:00"), z("2026-05-20 00:00"))
    summaries = [(s, a, b) for s, a, b, _uid in events]
    assert summaries[:4] == [
        ("On call: Primary (bob)", z("2026-03-13 00:00"), z("2026-03-16 08:00")),
        ("On call: Primary (carol)", z("2026-03-16 08:00"), z("2026-03-23 08:00")),
        ("On call: Primary (alice)", z("2026-03-23 08:00"), z("2026-03-30 07:00")),
        ("On call: Primary (carol)", z("2026-03-30 07:00"), z("2026-04-13 07:00")),
    ]
    assert all(
        a.tzinfo is not None and a.utcoffset().total_seconds() == 0 for _s, a, _b in summaries
    )
    # Read again later the same day: the same UIDs.
    clock.at = z("2026-03-20 18:00")
    again = icalendar.Calendar.from_ical(
        client.get(f"/pager/feeds/schedule/{schedule.feed_key}.ics").content
    )
    assert sorted(str(e["UID"]) for e in again.walk("VEVENT")) == sorted(uid for *_x, uid in events)

    profile = services.pager_profile_ensure(user=people["carol"])
    mine = icalendar.Calendar.from_ical(
        client.get(reverse("pager:person-feed", args=[profile.feed_key])).content
    )
    assert [(str(e["SUMMARY"]), e.decoded("DTSTART")) for e in mine.walk("VEVENT")][:2] == [
        ("On call: Primary (carol)", z("2026-03-16 08:00")),
        ("On call: Primary (carol)", z("2026-03-30 07:00")),
    ]


def test_a_wrong_or_rotated_feed_key_is_not_found(clock, people, schedule, client):
    old = schedule.feed_key
    assert client.get(f"/pager/feeds/schedule/{old}x.ics").status_code == 404
    assert client.get("/pager/feeds/person/nobody.ics").status_code == 404
    services.feed_key_rotate(schedule_id=schedule.pk, actor=people["mia"])
    assert client.get(f"/pager/feeds/schedule/{old}.ics").status_code == 404
    schedule.refresh_from_db()
    assert client.get(f"/pager/feeds/schedule/{schedule.feed_key}.ics").status_code == 200
    assert client.post(f"/pager/feeds/schedule/{schedule.feed_key}.ics").status_code == 405


def test_the_beat_task_reads_what_is_due(clock, schedule, server, settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    schedule.ical_url = f"{server.url}/team.ics"
    schedule.save()
    assert schedule_tasks.ical_refresh_due.apply().get() == 1
    assert schedule_tasks.ical_refresh_due.apply().get() == 0  # read a moment ago
    schedule.refresh_from_db()
    assert schedule.ical_text == CALENDAR


def test_who_is_on_call_costs_a_fixed_number_of_queries(
    clock, people, schedule, django_assert_max_num_queries
):
    services.schedule_ical_upload(schedule_id=schedule.pk, text=CALENDAR, actor=people["mia"])
    schedule.refresh_from_db()
    for n in range(3):
        rotation = Rotation.objects.create(
            schedule=schedule, name=f"r{n}", frequency="daily", priority=n,
            starts_at=wall_clock_stored(local("2026-03-02 09:00")),
        )  # fmt: skip
        for position, name in enumerate(["alice", "bob", "carol"]):
            RotationMember.objects.create(rotation=rotation, user=people[name], position=position)
        services.override_create(
            schedule_id=schedule.pk, user_id=people["dave"].pk, actor=people["mia"],
            starts_at=z(f"2026-03-2{n + 1} 10:00"), ends_at=z(f"2026-03-2{n + 1} 12:00"),
        )  # fmt: skip
    # Rotations, their members, overrides, the people the calendar names.
    with django_assert_max_num_queries(4):
        shifts = selectors.shifts_between(schedule, z("2026-03-13 00:00"), z("2026-05-20 00:00"))
    assert {s.source for s in shifts} == {"rotation", "override"}
