"""The team page's calendar layout (pager/views/calendar.py), without the database: where
a shift's pieces sit in each local day, across both daylight-saving changes, lanes for
people on call at once, colours per person."""

from __future__ import annotations

import zoneinfo
from datetime import date, datetime

from pager.schedules.shifts import Shift
from pager.views.calendar import calendar_build, week_start

BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")


def shift(user_id: int, start: datetime, end: datetime, source: str = "rotation") -> Shift:
    return Shift(
        user_id=user_id,
        username=f"u{user_id}",
        starts_at=start,
        ends_at=end,
        source=source,
        layer="Weekly",
    )


def pieces(calendar, row: int = 0) -> dict[date, list[tuple[int, int, int, int]]]:
    """day -> [(user, start slot, end slot, lane)]."""
    return {
        cell.day: [(b.shift.user_id, b.start_slot, b.end_slot, b.lane) for b in cell.blocks]
        for cell in calendar.rows[row].cells
        if cell.blocks
    }


def test_a_night_across_the_autumn_change_keeps_its_wall_clock():
    night = shift(
        1, datetime(2026, 10, 24, 22, tzinfo=BERLIN), datetime(2026, 10, 25, 6, tzinfo=BERLIN)
    )
    calendar = calendar_build(date(2026, 10, 19), BERLIN, [("s", [night])])
    assert pieces(calendar) == {
        date(2026, 10, 24): [(1, 88, 96, 1)],
        date(2026, 10, 25): [(1, 0, 24, 1)],
    }
    first, second = (c.blocks[0] for c in calendar.rows[0].cells if c.blocks)
    assert first.continues_after
    assert not first.continues_before
    assert second.continues_before
    assert not second.continues_after


def test_a_night_across_the_spring_change():
    night = shift(
        1, datetime(2026, 3, 28, 22, tzinfo=BERLIN), datetime(2026, 3, 29, 6, tzinfo=BERLIN)
    )
    calendar = calendar_build(date(2026, 3, 23), BERLIN, [("s", [night])])
    assert pieces(calendar)[date(2026, 3, 29)] == [(1, 0, 24, 1)]


def test_a_handoff_off_the_quarter_hour_shares_a_lane():
    handoff = datetime(2026, 12, 6, 8, 19, tzinfo=BERLIN)
    shifts = [
        shift(1, datetime(2026, 12, 5, 9, tzinfo=BERLIN), handoff),
        shift(2, handoff, datetime(2026, 12, 6, 18, 19, tzinfo=BERLIN), source="take"),
    ]
    calendar = calendar_build(date(2026, 11, 30), BERLIN, [("s", shifts)])
    assert pieces(calendar)[date(2026, 12, 6)] == [(1, 0, 33, 1), (2, 33, 73, 1)]


def test_people_on_call_at_once_get_lanes_and_colours():
    day = datetime(2026, 12, 8, tzinfo=BERLIN)
    shifts = [
        shift(7, day.replace(hour=9), day.replace(hour=17)),
        shift(3, day.replace(hour=12), day.replace(hour=20)),
        shift(7, day.replace(hour=20), day.replace(hour=22)),
    ]
    calendar = calendar_build(date(2026, 12, 7), BERLIN, [("a", shifts), ("b", shifts[1:2])])
    assert pieces(calendar)[date(2026, 12, 8)] == [
        (7, 36, 68, 1),
        (3, 48, 80, 2),
        (7, 80, 88, 1),
    ]
    assert calendar.legend == [(0, "u7", 7), (1, "u3", 3)]
    assert [b.colour for b in calendar.rows[1].cells[1].blocks] == [1]


def test_shifts_outside_the_window_are_left_out():
    before = shift(1, datetime(2026, 11, 1, tzinfo=BERLIN), datetime(2026, 11, 2, tzinfo=BERLIN))
    calendar = calendar_build(date(2026, 12, 7), BERLIN, [("s", [before])])
    assert pieces(calendar) == {}
    assert calendar.legend == []
    assert week_start(date(2026, 12, 5)) == date(2026, 11, 30)
