"""The team page's two-week calendar, laid out in Python so the template only prints it.

Rows are schedules, columns days in the viewer's zone. Each day cell is a CSS grid of 96
quarter-hour columns (static/css/pager.css names a class per column edge: the page's CSP
allows no inline style). A shift is cut at each local midnight and each piece placed by
its wall-clock start and end that day, so a shift across a daylight-saving change sits
where its local times say (22:00-06:00 stays 22:00-06:00 on the 25-hour day).
Overlapping pieces in one cell go to separate lanes (rows of the cell's grid).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo

from pager.schedules.shifts import Shift

SLOTS = 96  # quarter hours per day
MAX_LANES = 4  # further overlaps share the last lane
PALETTE = 10  # person colours (.pc-0 .. .pc-9)
DAYS = 14


@dataclass(frozen=True)
class Block:
    """One shift's piece inside one day cell."""

    shift: Shift
    start_slot: int  # 0..95
    end_slot: int  # 1..96 (excluded)
    lane: int  # 1..MAX_LANES
    colour: int
    continues_before: bool  # the shift began on an earlier day
    continues_after: bool  # the shift goes on into the next day
    link: str = ""  # where a click goes (take the shift, or ask to swap your own)
    link_kind: str = ""  # "take" | "swap" | ""


@dataclass
class DayCell:
    day: date
    blocks: list[Block] = field(default_factory=list)

    @property
    def lanes(self) -> int:
        return max((b.lane for b in self.blocks), default=1)


@dataclass
class Row:
    schedule: object  # a pager.models.Schedule
    cells: list[DayCell]
    shifts: list[Shift]


@dataclass
class Calendar:
    start: date
    days: list[date]
    rows: list[Row]
    legend: list[tuple[int, str, int]]  # (colour, username, user_id), in first-seen order
    zone: tzinfo


def local_midnight(day: date, zone: tzinfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=zone)


def window(start: date, zone: tzinfo, days: int = DAYS) -> tuple[datetime, datetime]:
    """The aware bounds of `days` local days from `start`."""
    return local_midnight(start, zone), local_midnight(start + timedelta(days=days), zone)


def _slot(moment: datetime, zone: tzinfo) -> int:
    """The nearest quarter-hour edge of `moment`'s wall-clock time (both ends of every
    piece round the same way, so a handoff never draws two pieces over each other)."""
    local = moment.astimezone(zone)
    minutes = local.hour * 60 + local.minute + local.second / 60
    return math.floor(minutes / 15 + 0.5)


def _place(shift: Shift, day: date, zone: tzinfo) -> tuple[int, int, bool, bool] | None:
    day_start, day_end = local_midnight(day, zone), local_midnight(day + timedelta(days=1), zone)
    piece = shift.clipped(day_start, day_end)
    if piece is None:
        return None
    start_slot = _slot(piece.starts_at, zone)
    end_slot = SLOTS if piece.ends_at >= day_end else _slot(piece.ends_at, zone)
    # The repeated hour of an autumn change can put the end's wall clock before the
    # start's; a piece is never narrower than one quarter hour.
    end_slot = min(max(end_slot, start_slot + 1), SLOTS)
    start_slot = min(start_slot, SLOTS - 1)
    return start_slot, end_slot, shift.starts_at < day_start, shift.ends_at > day_end


def _lanes(pieces: list[tuple[datetime, datetime]]) -> list[int]:
    """A lane per piece (sorted by start): the first lane free at its start. Real times,
    not slots: only people on call at the same moment take separate lanes."""
    ends: list[datetime] = []
    lanes = []
    for start, end in pieces:
        for index, lane_end in enumerate(ends):
            if lane_end <= start:
                ends[index] = end
                lanes.append(min(index + 1, MAX_LANES))
                break
        else:
            ends.append(end)
            lanes.append(min(len(ends), MAX_LANES))
    return lanes


Link = Callable[[object, Shift], tuple[str, str]]  # (schedule, shift) -> (kind, url)


def calendar_build(
    start: date,
    zone: tzinfo,
    rows: Sequence[tuple[object, list[Shift]]],
    days: int = DAYS,
    link: Link | None = None,
) -> Calendar:
    """`rows`: (schedule, its final shifts around the window) in display order; `link`
    gives each shift the link its blocks follow."""
    colours: dict[int, int] = {}
    legend: list[tuple[int, str, int]] = []
    day_list = [start + timedelta(days=n) for n in range(days)]
    begin, end = window(start, zone, days)
    built = []
    for schedule, shifts in rows:
        # Shifts may reach past the window (read wider so a title shows the real ends).
        inside = [s for s in shifts if s.ends_at > begin and s.starts_at < end]
        ordered = sorted(inside, key=lambda s: (s.starts_at, s.ends_at, s.user_id))
        for shift in ordered:
            if shift.user_id not in colours:
                colours[shift.user_id] = len(colours) % PALETTE
                legend.append((colours[shift.user_id], shift.username, shift.user_id))
        links = {s: link(schedule, s) for s in ordered} if link is not None else {}
        cells = []
        for day in day_list:
            placed = [(s, p) for s in ordered if (p := _place(s, day, zone)) is not None]
            lanes = _lanes([(s.starts_at, s.ends_at) for s, _ in placed])
            blocks = [
                Block(
                    shift=s,
                    start_slot=p[0],
                    end_slot=p[1],
                    lane=lane,
                    colour=colours[s.user_id],
                    continues_before=p[2],
                    continues_after=p[3],
                    link=links[s][1] if s in links else "",
                    link_kind=links[s][0] if s in links else "",
                )
                for (s, p), lane in zip(placed, lanes, strict=True)
            ]
            cells.append(DayCell(day=day, blocks=blocks))
        built.append(Row(schedule=schedule, cells=cells, shifts=ordered))
    return Calendar(start=start, days=day_list, rows=built, legend=legend, zone=zone)


def week_start(day: date) -> date:
    """The Monday of `day`'s week."""
    return day - timedelta(days=day.weekday())
