"""Rotation arithmetic (pager/schedules/rotation.py, layers.py) against hand-computed
tables across daylight-saving changes, and properties that hold for any rotation.

Offsets used in the comments:
  Europe/Berlin     CET  = UTC+1 until 2026-03-29 02:00 local, CEST = UTC+2 until
                    2026-10-25 03:00 CEST, when the clocks go back to 02:00 CET.
  America/New_York  EST  = UTC-5 until 2026-03-08 02:00 local (clocks jump to 03:00 EDT),
                    EDT  = UTC-4 until 2026-11-01 02:00 EDT (back to 01:00 EST).
"""

from datetime import UTC, datetime, time, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from pager.schedules import layers
from pager.schedules.rotation import RotationPlan, localise, rotation_shifts
from pager.schedules.shifts import Shift

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
ALICE, BOB, CAROL = (1, "alice"), (2, "bob"), (3, "carol")


def local(text: str) -> datetime:
    """A naive wall-clock time: what a rotation's handoff and a restriction are."""
    return datetime.fromisoformat(text)


def z(text: str) -> datetime:
    """'2026-03-30 07:00' read as UTC."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def table(plan: RotationPlan, start: str, end: str) -> list[tuple[str, str, str]]:
    return [
        (s.username, f"{s.starts_at:%Y-%m-%d %H:%M}", f"{s.ends_at:%Y-%m-%d %H:%M}")
        for s in rotation_shifts(plan, z(start), z(end))
    ]


def who(plan: RotationPlan, at: str, start: str = "2026-01-01", end: str = "2027-01-01") -> str:
    shifts = rotation_shifts(plan, z(start), z(end))
    found = layers.oncall_at(shifts, z(at))
    return found[0].username if found else "nobody"


# --- weekly, 09:00 Europe/Berlin --------------------------------------------------------
WEEKLY_BERLIN = RotationPlan(
    name="primary",
    zone=BERLIN,
    starts_at=local("2026-03-02 09:00"),  # a Monday; handoff k is 7k days later, 09:00
    members=(ALICE, BOB, CAROL),  # k % 3: 0 alice, 1 bob, 2 carol
    frequency="weekly",
)


def test_weekly_berlin_across_spring_forward():
    # k=2 carol  03-16 09:00 CET  = 08:00Z -> 03-23 09:00 CET  = 08:00Z   7 days
    # k=3 alice  03-23 09:00 CET  = 08:00Z -> 03-30 09:00 CEST = 07:00Z   6 days 23 h
    # k=4 bob    03-30 09:00 CEST = 07:00Z -> 04-06 09:00 CEST = 07:00Z   7 days
    assert table(WEEKLY_BERLIN, "2026-03-16 08:00", "2026-04-06 07:00") == [
        ("carol", "2026-03-16 08:00", "2026-03-23 08:00"),
        ("alice", "2026-03-23 08:00", "2026-03-30 07:00"),
        ("bob", "2026-03-30 07:00", "2026-04-06 07:00"),
    ]


def test_weekly_berlin_across_fall_back():
    # 03-02 -> 10-19 is 231 days = 33 weeks: k=33, 33 % 3 = 0, alice.
    # k=32 carol 10-12 09:00 CEST = 07:00Z -> 10-19 09:00 CEST = 07:00Z   7 days
    # k=33 alice 10-19 09:00 CEST = 07:00Z -> 10-26 09:00 CET  = 08:00Z   7 days 1 h
    # k=34 bob   10-26 09:00 CET  = 08:00Z -> 11-02 09:00 CET  = 08:00Z   7 days
    assert table(WEEKLY_BERLIN, "2026-10-12 07:00", "2026-11-02 08:00") == [
        ("carol", "2026-10-12 07:00", "2026-10-19 07:00"),
        ("alice", "2026-10-19 07:00", "2026-10-26 08:00"),
        ("bob", "2026-10-26 08:00", "2026-11-02 08:00"),
    ]


def test_weekly_berlin_who_is_on_call():
    expected = {
        "2026-03-30 06:59": "alice",  # 08:59 CEST: still alice
        "2026-03-30 07:00": "bob",  # 09:00 CEST
        "2026-03-29 00:59": "alice",  # 01:59 CET, a minute before the jump
        "2026-10-26 07:59": "alice",  # 08:59 CET (it would be 09:59 CEST)
        "2026-10-26 08:00": "bob",  # 09:00 CET
        "2026-02-28 12:00": "nobody",  # before the first handoff
    }
    assert {at: who(WEEKLY_BERLIN, at) for at in expected} == expected


def test_a_range_cuts_the_shifts_and_the_end_stops_the_rotation():
    plan = RotationPlan(**{**WEEKLY_BERLIN.__dict__, "ends_at": local("2026-03-25 12:00")})
    # The range starts mid-shift; ends_at 03-25 12:00 CET = 11:00Z cuts alice's k=3 week.
    assert table(plan, "2026-03-20 00:00", "2026-04-30 00:00") == [
        ("carol", "2026-03-20 00:00", "2026-03-23 08:00"),
        ("alice", "2026-03-23 08:00", "2026-03-25 11:00"),
    ]


# --- daily, America/New_York, a handoff at a time that does not exist or happens twice ---
def test_daily_new_york_0230_across_spring_forward():
    plan = RotationPlan(
        name="daily", zone=NEW_YORK, starts_at=local("2026-03-06 02:30"),
        members=(ALICE, BOB), frequency="daily",
    )  # fmt: skip
    # k=0 alice 03-06 02:30 EST = 07:30Z -> 03-07 02:30 EST = 07:30Z          24 h
    # k=1 bob   03-07 07:30Z -> 03-08 02:30 does not exist: forward to the jump,
    #           03:00 EDT = 07:00Z                                            23 h 30
    # k=2 alice 03-08 07:00Z -> 03-09 02:30 EDT = 06:30Z                     23 h 30
    # k=3 bob   03-09 06:30Z -> 03-10 06:30Z                                  24 h
    assert table(plan, "2026-03-06 00:00", "2026-03-10 06:30") == [
        ("alice", "2026-03-06 07:30", "2026-03-07 07:30"),
        ("bob", "2026-03-07 07:30", "2026-03-08 07:00"),
        ("alice", "2026-03-08 07:00", "2026-03-09 06:30"),
        ("bob", "2026-03-09 06:30", "2026-03-10 06:30"),
    ]
    # 02:30 on 2026-11-01 is after the repeated hour (01:00-02:00): plain EST.
    # 03-06 -> 10-31 is 239 days: k=239 is odd, bob.
    # k=239 bob   10-31 02:30 EDT = 06:30Z -> 11-01 02:30 EST = 07:30Z        25 h
    # k=240 alice 11-01 07:30Z -> 11-02 02:30 EST = 07:30Z                    24 h
    assert table(plan, "2026-10-31 06:30", "2026-11-02 07:30") == [
        ("bob", "2026-10-31 06:30", "2026-11-01 07:30"),
        ("alice", "2026-11-01 07:30", "2026-11-02 07:30"),
    ]


def test_daily_new_york_0130_across_fall_back_takes_the_first_0130():
    plan = RotationPlan(
        name="daily", zone=NEW_YORK, starts_at=local("2026-10-30 01:30"),
        members=(ALICE, BOB), frequency="daily",
    )  # fmt: skip
    # k=0 alice 10-30 01:30 EDT = 05:30Z -> 10-31 01:30 EDT = 05:30Z          24 h
    # k=1 bob   10-31 05:30Z -> 11-01 01:30 happens twice: the first, EDT = 05:30Z  24 h
    # k=2 alice 11-01 05:30Z -> 11-02 01:30 EST = 06:30Z                      25 h
    assert table(plan, "2026-10-30 05:30", "2026-11-02 06:30") == [
        ("alice", "2026-10-30 05:30", "2026-10-31 05:30"),
        ("bob", "2026-10-31 05:30", "2026-11-01 05:30"),
        ("alice", "2026-11-01 05:30", "2026-11-02 06:30"),
    ]
    assert who(plan, "2026-11-01 06:15") == "alice"  # the second 01:15 (EST)


def test_localise_rule():
    assert localise(local("2026-03-08 02:30"), NEW_YORK) == z("2026-03-08 07:00")  # gap
    assert localise(local("2026-03-08 02:00"), NEW_YORK) == z("2026-03-08 07:00")  # gap
    assert localise(local("2026-03-08 03:00"), NEW_YORK) == z("2026-03-08 07:00")
    assert localise(local("2026-11-01 01:30"), NEW_YORK) == z("2026-11-01 05:30")  # first
    assert localise(local("2026-03-29 02:15"), BERLIN) == z("2026-03-29 01:00")  # gap
    assert localise(local("2026-10-25 02:15"), BERLIN) == z("2026-10-25 00:15")  # first
    lord_howe = ZoneInfo("Australia/Lord_Howe")  # a 30-minute change: 02:00 -> 02:30
    assert localise(local("2026-10-04 02:10"), lord_howe) == z("2026-10-03 15:30")


# --- custom: every 12 hours ------------------------------------------------------------
def test_custom_12_hour_rotation_keeps_0800_and_2000_local():
    plan = RotationPlan(
        name="halves", zone=BERLIN, starts_at=local("2026-03-27 08:00"),
        members=(ALICE, BOB), frequency="custom", shift_hours=12,
    )  # fmt: skip
    # k=0 alice 03-27 08:00 CET  = 07:00Z -> 20:00 CET = 19:00Z               12 h
    # k=1 bob   03-27 19:00Z -> 03-28 08:00 CET = 07:00Z                       12 h
    # k=2 alice 03-28 07:00Z -> 20:00 CET = 19:00Z                             12 h
    # k=3 bob   03-28 19:00Z -> 03-29 08:00 CEST = 06:00Z                      11 h
    # k=4 alice 03-29 06:00Z -> 20:00 CEST = 18:00Z                            12 h
    # k=5 bob   03-29 18:00Z -> 03-30 08:00 CEST = 06:00Z                      12 h
    assert table(plan, "2026-03-27 00:00", "2026-03-30 06:00") == [
        ("alice", "2026-03-27 07:00", "2026-03-27 19:00"),
        ("bob", "2026-03-27 19:00", "2026-03-28 07:00"),
        ("alice", "2026-03-28 07:00", "2026-03-28 19:00"),
        ("bob", "2026-03-28 19:00", "2026-03-29 06:00"),
        ("alice", "2026-03-29 06:00", "2026-03-29 18:00"),
        ("bob", "2026-03-29 18:00", "2026-03-30 06:00"),
    ]


# --- restrictions ----------------------------------------------------------------------
def test_weekdays_0900_to_1800_across_spring_forward():
    plan = RotationPlan(
        name="office", zone=BERLIN, starts_at=local("2026-03-23 09:00"),
        members=(ALICE, BOB), frequency="daily",
        restrict_weekdays=(0, 1, 2, 3, 4), restrict_start=time(9), restrict_end=time(18),
    )  # fmt: skip
    # Handoffs every day at 09:00; each shift keeps only 09:00-18:00 Monday to Friday.
    # Mon 03-23 k=0 alice 09:00-18:00 CET = 08:00Z-17:00Z ... Fri 03-27 k=4 alice;
    # Sat k=5 bob and Sun k=6 alice: nothing; Mon 03-30 k=7 bob 09:00-18:00 CEST =
    # 07:00Z-16:00Z; Tue 03-31 k=8 alice.
    assert table(plan, "2026-03-23 00:00", "2026-04-01 00:00") == [
        ("alice", "2026-03-23 08:00", "2026-03-23 17:00"),
        ("bob", "2026-03-24 08:00", "2026-03-24 17:00"),
        ("alice", "2026-03-25 08:00", "2026-03-25 17:00"),
        ("bob", "2026-03-26 08:00", "2026-03-26 17:00"),
        ("alice", "2026-03-27 08:00", "2026-03-27 17:00"),
        ("bob", "2026-03-30 07:00", "2026-03-30 16:00"),
        ("alice", "2026-03-31 07:00", "2026-03-31 16:00"),
    ]
    expected = {
        "2026-03-27 16:59": "alice",
        "2026-03-27 17:00": "nobody",  # 18:00 CET, Friday evening
        "2026-03-28 12:00": "nobody",  # Saturday
        "2026-03-30 06:59": "nobody",  # 08:59 CEST
        "2026-03-30 07:00": "bob",  # 09:00 CEST
    }
    assert {at: who(plan, at) for at in expected} == expected


def test_a_weekly_shift_is_cut_into_its_allowed_days():
    plan = RotationPlan(
        name="office", zone=BERLIN, starts_at=local("2026-03-23 09:00"),
        members=(ALICE, BOB), frequency="weekly",
        restrict_weekdays=(0, 1, 2, 3, 4), restrict_start=time(9), restrict_end=time(18),
    )  # fmt: skip
    shifts = table(plan, "2026-03-23 00:00", "2026-04-04 00:00")
    assert [s[0] for s in shifts] == ["alice"] * 5 + ["bob"] * 5
    assert shifts[5] == ("bob", "2026-03-30 07:00", "2026-03-30 16:00")


def test_a_restriction_that_wraps_past_midnight_across_fall_back():
    plan = RotationPlan(
        name="nights", zone=BERLIN, starts_at=local("2026-10-19 09:00"),
        members=(ALICE, BOB), frequency="weekly",
        restrict_weekdays=(4, 5), restrict_start=time(22), restrict_end=time(6),
    )  # fmt: skip
    # Friday and Saturday nights, 22:00 to 06:00 the next morning (the day it opens).
    # Fri 10-23 22:00 CEST = 20:00Z -> Sat 06:00 CEST = 04:00Z            8 h  alice
    # Sat 10-24 22:00 CEST = 20:00Z -> Sun 10-25 06:00 CET = 05:00Z       9 h  alice
    # k=1 bob from Mon 10-26 09:00 CET: Fri 10-30 22:00 CET = 21:00Z -> 05:00Z, Sat too.
    assert table(plan, "2026-10-19 00:00", "2026-11-02 00:00") == [
        ("alice", "2026-10-23 20:00", "2026-10-24 04:00"),
        ("alice", "2026-10-24 20:00", "2026-10-25 05:00"),
        ("bob", "2026-10-30 21:00", "2026-10-31 05:00"),
        ("bob", "2026-10-31 21:00", "2026-11-01 05:00"),
    ]
    expected = {
        "2026-10-24 19:59": "nobody",  # 21:59 CEST
        "2026-10-25 00:30": "alice",  # the first 02:30 (CEST)
        "2026-10-25 01:30": "alice",  # the second 02:30 (CET)
        "2026-10-25 04:59": "alice",  # 05:59 CET
        "2026-10-25 05:00": "nobody",  # 06:00 CET
        "2026-10-25 21:00": "nobody",  # Sunday night is not allowed
    }
    assert {at: who(plan, at) for at in expected} == expected


# --- layers ----------------------------------------------------------------------------
def test_a_higher_layer_covers_a_lower_one_and_its_gaps_fall_through():
    nights = RotationPlan(
        name="nights", zone=BERLIN, starts_at=local("2026-03-23 09:00"), members=(CAROL,),
        frequency="daily", restrict_start=time(22), restrict_end=time(6),
    )  # fmt: skip
    start, end = z("2026-03-27 00:00"), z("2026-03-30 00:00")
    final = layers.combine(
        layers=[rotation_shifts(nights, start, end), rotation_shifts(WEEKLY_BERLIN, start, end)],
        start=start,
        end=end,
    )
    # alice's week (k=3) underneath; carol 22:00-06:00 every night on top.
    # Fri 03-27 22:00 CET = 21:00Z -> Sat 06:00 CET = 05:00Z; Sat 21:00Z -> Sun 06:00
    # CEST = 04:00Z (the jump shortens the night to 7 h); Sun 22:00 CEST = 20:00Z.
    assert [(s.username, f"{s.starts_at:%d %H:%M}", f"{s.ends_at:%d %H:%M}") for s in final] == [
        ("carol", "27 00:00", "27 05:00"),
        ("alice", "27 05:00", "27 21:00"),
        ("carol", "27 21:00", "28 05:00"),
        ("alice", "28 05:00", "28 21:00"),
        ("carol", "28 21:00", "29 04:00"),
        ("alice", "29 04:00", "29 20:00"),
        ("carol", "29 20:00", "30 00:00"),
    ]


def test_neighbouring_shifts_of_one_person_merge():
    solo = RotationPlan(
        name="solo",
        zone=BERLIN,
        starts_at=local("2026-03-02 09:00"),
        members=(BOB,),
        frequency="daily",
    )
    start, end = z("2026-03-10 00:00"), z("2026-03-20 00:00")
    final = layers.combine(layers=[rotation_shifts(solo, start, end)], start=start, end=end)
    assert [(s.starts_at, s.ends_at) for s in final] == [(start, end)]


# --- properties ------------------------------------------------------------------------
ZONES = [BERLIN, NEW_YORK, ZoneInfo("UTC"), ZoneInfo("Australia/Lord_Howe")]
# Restriction bounds outside 01:00-03:00, where these zones' changes fall: a bound there
# has no single reading, which the examples above pin down instead.
BOUNDS = [time(h, m) for h in [0, *range(3, 24)] for m in (0, 30) if (h, m) != (3, 0)]


@st.composite
def plans(draw: st.DrawFn) -> RotationPlan:
    frequency = draw(st.sampled_from(["daily", "weekly", "custom"]))
    restricted = draw(st.booleans())
    begins = local("2026-01-01 00:00") + timedelta(minutes=30 * draw(st.integers(0, 2 * 24 * 330)))
    return RotationPlan(
        name=draw(st.sampled_from(["a", "b", "c"])),
        zone=draw(st.sampled_from(ZONES)),
        starts_at=begins,
        members=tuple((i, f"p{i}") for i in range(1, draw(st.integers(1, 4)) + 1)),
        frequency=frequency,
        interval=draw(st.integers(1, 3)),
        shift_hours=draw(st.integers(1, 48)) if frequency == "custom" else None,
        ends_at=begins + timedelta(hours=draw(st.integers(1, 24 * 90)))
        if draw(st.booleans())
        else None,
        restrict_weekdays=tuple(draw(st.sets(st.integers(0, 6), max_size=6))) if restricted else (),
        restrict_start=draw(st.sampled_from(BOUNDS))
        if restricted and draw(st.booleans())
        else None,
        restrict_end=draw(st.sampled_from(BOUNDS)),
    )


def allowed(plan: RotationPlan, at: datetime) -> bool:
    """Whether `at` is inside the rotation's life and restrictions, read directly."""
    if at < localise(plan.starts_at, plan.zone):
        return False
    if plan.ends_at is not None and at >= localise(plan.ends_at, plan.zone):
        return False
    if not plan.restricted:
        return True
    local = at.astimezone(plan.zone)
    days = set(plan.restrict_weekdays) or set(range(7))
    if plan.restrict_start is None or plan.restrict_end is None:
        return local.weekday() in days
    begin, until, clock = plan.restrict_start, plan.restrict_end, local.time()
    if until > begin:
        return local.weekday() in days and begin <= clock < until
    yesterday = (local.weekday() - 1) % 7
    return (local.weekday() in days and clock >= begin) or (yesterday in days and clock < until)


def probes(shifts: list[Shift], start: datetime, end: datetime, extra: list[int]) -> list[datetime]:
    points = [start, end - timedelta(seconds=1)]
    for s in shifts:
        points += [
            s.starts_at,
            s.starts_at - timedelta(seconds=1),
            s.ends_at,
            s.ends_at - timedelta(seconds=1),
        ]
    points += [start + (end - start) * n / 1000 for n in extra]
    return [p for p in points if start <= p < end]


@settings(max_examples=150, deadline=None)
@given(plan=plans(), offset=st.integers(-24 * 40, 24 * 300), days=st.integers(1, 60),
       extra=st.lists(st.integers(0, 999), max_size=40))  # fmt: skip
def test_shifts_never_overlap_and_cover_exactly_the_allowed_time(plan, offset, days, extra):
    start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=offset)
    end = start + timedelta(days=days)
    shifts = rotation_shifts(plan, start, end)
    for before, after in pairwise(shifts):
        assert before.ends_at <= after.starts_at
    for s in shifts:
        assert start <= s.starts_at < s.ends_at <= end
    final = layers.combine(layers=[shifts], start=start, end=end)
    for at in probes(shifts, start, end, extra):
        assert bool(layers.oncall_at(final, at)) == allowed(plan, at), at


@settings(max_examples=100, deadline=None)
@given(stack=st.lists(plans(), min_size=1, max_size=3), days=st.integers(1, 40),
       extra=st.lists(st.integers(0, 999), max_size=40))  # fmt: skip
def test_the_highest_layer_with_someone_is_on_call(stack, days, extra):
    start = datetime(2026, 3, 1, tzinfo=UTC)
    end = start + timedelta(days=days)
    per_layer = [rotation_shifts(plan, start, end) for plan in stack]  # highest first
    final = layers.combine(layers=per_layer, start=start, end=end)
    for before, after in pairwise(final):
        assert before.ends_at <= after.starts_at
    everything = [s for layer in per_layer for s in layer]
    for at in probes(everything, start, end, extra):
        expected = next(
            (found for layer in per_layer if (found := layers.oncall_at(layer, at))), []
        )
        got = layers.oncall_at(final, at)
        assert [(s.user_id, s.layer) for s in got] == [(s.user_id, s.layer) for s in expected]
