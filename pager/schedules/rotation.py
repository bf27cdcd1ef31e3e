"""The shifts of one rotation (one layer) between two instants. Pure: no database.

Handoffs are stepped by dateutil's rrule on NAIVE wall-clock datetimes in the schedule's
zone (DAILY or WEEKLY with the rotation's interval; HOURLY with interval=shift_hours for a
custom rotation), and only then turned into instants. So a 09:00 handoff stays at 09:00
local time across a daylight-saving change, and the shift that spans the change is an
hour shorter (spring) or longer (autumn) than the others.

Turning a wall-clock time into an instant (`localise`):
- an ambiguous time (it happens twice when the clocks go back) is its FIRST occurrence,
  the one still on summer time (fold=0);
- a time that does not exist (skipped when the clocks go forward) moves forward to the
  first instant that exists: the moment of the change itself. A 02:30 handoff in New
  York on 2026-03-08 happens at 03:00 EDT (07:00 UTC).
Two handoffs that land on the same instant that way make an empty shift, which is
dropped (that member's turn is skipped).

Members take turns in position order: the shift starting at the k-th handoff (k = 0 at
`starts_at`) belongs to members[k % len(members)]. `ends_at` ends the last shift.

Restrictions keep the layer to some weekdays and hours, in the schedule's zone: every
allowed day (0 = Monday) opens a window from `restrict_start` to `restrict_end`; an end
at or before the start wraps past midnight (22:00-06:00 runs into the next morning,
and belongs to the day it begins). Weekdays alone allow those whole days; hours alone
allow them every day. Each shift is cut to the parts inside the windows; handoffs are
not moved.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from dateutil import rrule

from pager.schedules.shifts import ROTATION, Shift

DAILY, WEEKLY, CUSTOM = "daily", "weekly", "custom"  # pager.models.Frequency's values


@dataclass(frozen=True)
class RotationPlan:
    """What the arithmetic needs of a Rotation and its members (selectors build it)."""

    name: str
    zone: ZoneInfo
    starts_at: datetime  # naive wall clock, the first handoff
    members: tuple[tuple[int, str], ...]  # (user_id, username) in position order
    frequency: str = WEEKLY
    interval: int = 1
    shift_hours: int | None = None
    ends_at: datetime | None = None  # naive wall clock
    restrict_weekdays: tuple[int, ...] = ()
    restrict_start: time | None = None
    restrict_end: time | None = None
    priority: int = 0

    @property
    def restricted(self) -> bool:
        hours = self.restrict_start is not None and self.restrict_end is not None
        return bool(self.restrict_weekdays) or hours


# --- wall clock and instants ---------------------------------------------------------------
def wall_clock(value: datetime) -> datetime:
    """A Rotation's stored `starts_at`/`ends_at` as the naive wall-clock time it means.
    The database hands a DateTimeField back aware in UTC, so the wall clock is stored as
    those same fields tagged UTC (`wall_clock_stored`); a naive value is taken as is."""
    if value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def wall_clock_stored(value: datetime) -> datetime:
    """The value to save in a Rotation's `starts_at`/`ends_at` for a naive wall-clock
    time (aware, so Django does not warn and does not shift it by TIME_ZONE)."""
    return value.replace(tzinfo=UTC)


def localise(naive: datetime, zone: ZoneInfo) -> datetime:
    """The instant (aware, UTC) of a wall-clock time in `zone`; see the module docstring
    for ambiguous (first occurrence) and nonexistent (forward to the change) times."""
    first = naive.replace(tzinfo=zone, fold=0)
    instant = first.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) == naive:
        return instant
    # In the gap: fold=0 reads it with the offset before the change (the later instant),
    # fold=1 with the offset after (the earlier one); the change lies between the two.
    # Bisect on whole seconds to the first instant on the new offset.
    after = naive.replace(tzinfo=zone, fold=1).utcoffset()
    lo, hi = int(naive.replace(tzinfo=zone, fold=1).timestamp()), int(instant.timestamp())
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if datetime.fromtimestamp(mid, tz=zone).utcoffset() == after:
            hi = mid
        else:
            lo = mid
    return datetime.fromtimestamp(hi, tz=UTC)


# --- handoffs ------------------------------------------------------------------------------
def _step(plan: RotationPlan) -> timedelta:
    if plan.frequency == CUSTOM:
        return timedelta(hours=max(1, plan.shift_hours or 24))
    days = 1 if plan.frequency == DAILY else 7
    return timedelta(days=days * max(1, plan.interval))


def handoff_rule(plan: RotationPlan, skip: int = 0) -> rrule.rrule:
    """The handoffs as an rrule over naive wall-clock datetimes, from the `skip`-th on."""
    # Skipping ahead is exact: wall-clock steps are all the same length (that is the
    # point of stepping naive times); rrule does the stepping from there.
    dtstart = plan.starts_at + skip * _step(plan)
    if plan.frequency == CUSTOM:
        return rrule.rrule(rrule.HOURLY, interval=max(1, plan.shift_hours or 24), dtstart=dtstart)
    freq = rrule.DAILY if plan.frequency == DAILY else rrule.WEEKLY
    return rrule.rrule(freq, interval=max(1, plan.interval), dtstart=dtstart)


def _turns(
    plan: RotationPlan, start: datetime, end: datetime
) -> Iterator[tuple[int, datetime, datetime]]:
    """(k, start, end) instants of each shift that ends after `start` and begins before
    `end`, in order (k counts handoffs from `starts_at`: whose turn it is)."""
    last = localise(plan.ends_at, plan.zone) if plan.ends_at is not None else None
    # Begin a couple of handoffs before `start` (a day of slack for the zone's offset),
    # not at `starts_at`: a rotation years old would otherwise step through every shift.
    before = start.astimezone(plan.zone).replace(tzinfo=None) - timedelta(days=1)
    skip = max(0, (before - plan.starts_at) // _step(plan) - 1)
    previous: tuple[int, datetime] | None = None
    for k, local in enumerate(handoff_rule(plan, skip), start=skip):
        instant = localise(local, plan.zone)
        if last is not None and instant > last:
            instant = last
        if previous is not None and instant > start:
            yield previous[0], previous[1], instant
        if instant >= end or (last is not None and instant >= last):
            return
        previous = (k, instant)


def rotation_shifts(plan: RotationPlan, start: datetime, end: datetime) -> list[Shift]:
    """The rotation's shifts inside [start, end) (aware), cut to its restrictions and to
    the range; in order, never overlapping."""
    if not plan.members or start >= end:
        return []
    shifts: list[Shift] = []
    for k, starts_at, ends_at in _turns(plan, start, end):
        if ends_at <= start or starts_at >= ends_at:
            continue
        user_id, username = plan.members[k % len(plan.members)]
        shift = Shift(user_id, username, starts_at, ends_at, ROTATION, plan.name).clipped(
            start, end
        )
        if shift is not None:
            shifts.append(shift)
    if plan.restricted and shifts:
        shifts = cut(shifts, allowed_windows(plan, shifts[0].starts_at, shifts[-1].ends_at))
    return shifts


# --- restrictions --------------------------------------------------------------------------
def allowed_windows(
    plan: RotationPlan, start: datetime, end: datetime
) -> list[tuple[datetime, datetime]]:
    """The restriction windows (aware, merged, in order) that meet [start, end)."""
    zone = plan.zone
    # Both hours or neither (Rotation.clean): one alone is read as none.
    if plan.restrict_start is not None and plan.restrict_end is not None:
        from_, until = plan.restrict_start, plan.restrict_end
    else:
        from_, until = time(0), time(0)
    # A window belongs to the day it opens, and one that wraps opens the day before:
    # begin a day before `start`'s local date.
    first_day = datetime.combine(start.astimezone(zone).date() - timedelta(days=1), from_)
    days = rrule.rrule(
        rrule.DAILY,
        dtstart=first_day,
        byweekday=sorted(set(plan.restrict_weekdays)) or None,
    )
    windows: list[tuple[datetime, datetime]] = []
    for opens_local in days:
        opens = localise(opens_local, zone)
        if opens >= end:
            break
        closes_day = opens_local.date() + timedelta(days=1 if until <= from_ else 0)
        closes = localise(datetime.combine(closes_day, until), zone)
        if closes <= start or closes <= opens:
            continue
        if windows and opens <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], closes))
        else:
            windows.append((opens, closes))
    return windows


def cut(shifts: Sequence[Shift], windows: Sequence[tuple[datetime, datetime]]) -> list[Shift]:
    """The parts of `shifts` (in order, apart) inside `windows` (in order, apart)."""
    pieces: list[Shift] = []
    w = 0
    for shift in shifts:
        while w < len(windows) and windows[w][1] <= shift.starts_at:
            w += 1
        i = w
        while i < len(windows) and windows[i][0] < shift.ends_at:
            piece = shift.clipped(*windows[i])
            if piece is not None:
                pieces.append(piece)
            i += 1
    return pieces
