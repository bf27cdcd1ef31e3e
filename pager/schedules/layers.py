"""Who is on call when layers meet. Pure: no database.

From the bottom up:
1. the imported iCal calendar (where two of its events overlap, the one that began
   later wins; a tie goes to the later one in the calendar);
2. the rotations, lowest priority first: a layer covers everything below it wherever
   it has someone on call (restricted hours and ended rotations leave gaps that fall
   through to the layers below); two layers of the same priority: the one given first
   (the older rotation) wins;
3. the overrides (takes and accepted swaps included; cancelled ones are never given
   here): where two overlap, the one created later wins.
The result never overlaps and is cut to the range asked for; neighbouring pieces of the
same person from the same source, layer and cover merge into one shift.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from pager.schedules.shifts import Shift


def combine(
    *,
    layers: Sequence[Sequence[Shift]],
    overrides: Sequence[Shift] = (),
    ical: Sequence[Shift] = (),
    start: datetime,
    end: datetime,
) -> list[Shift]:
    """The final shifts in [start, end). `layers`: each rotation's shifts (in order,
    apart), highest priority first; `overrides` in creation order (oldest first)."""
    ical_order = sorted(range(len(ical)), key=lambda i: (ical[i].starts_at, i))
    result = flatten(ical[i] for i in ical_order)
    for layer in reversed(layers):
        result = cover(result, list(layer))
    result = cover(result, flatten(overrides))
    clipped = (shift.clipped(start, end) for shift in result)
    return merge([shift for shift in clipped if shift is not None])


def flatten(shifts: Iterable[Shift]) -> list[Shift]:
    """Overlapping shifts made apart, each one winning over those before it."""
    result: list[Shift] = []
    for shift in shifts:
        result = cover(result, [shift])
    return result


def cover(lower: Sequence[Shift], upper: Sequence[Shift]) -> list[Shift]:
    """`upper` (in order, apart) laid over `lower` (in order, apart): what is left of
    `lower` outside `upper`'s shifts, and `upper`, in order."""
    if not upper:
        return list(lower)
    kept: list[Shift] = []
    u = 0
    for shift in lower:
        piece: Shift | None = shift
        # Skip the upper shifts that end before this one begins (both lists are in order).
        while u < len(upper) and upper[u].ends_at <= shift.starts_at:
            u += 1
        i = u
        while piece is not None and i < len(upper) and upper[i].starts_at < piece.ends_at:
            above = upper[i]
            if above.starts_at > piece.starts_at:
                kept.append(replace(piece, ends_at=min(piece.ends_at, above.starts_at)))
            piece = (
                replace(piece, starts_at=above.ends_at) if above.ends_at < piece.ends_at else None
            )
            i += 1
        if piece is not None:
            kept.append(piece)
    return sorted([*kept, *upper], key=lambda s: s.starts_at)


def merge(shifts: Sequence[Shift]) -> list[Shift]:
    """Neighbours of the same person, source, layer and cover joined into one."""
    merged: list[Shift] = []
    for shift in shifts:
        last = merged[-1] if merged else None
        if (
            last is not None
            and last.ends_at == shift.starts_at
            and (last.user_id, last.source, last.layer, last.replaces_id)
            == (shift.user_id, shift.source, shift.layer, shift.replaces_id)
        ):
            merged[-1] = replace(last, ends_at=shift.ends_at)
        else:
            merged.append(shift)
    return merged


def oncall_at(shifts: Iterable[Shift], at: datetime) -> list[Shift]:
    return [shift for shift in shifts if shift.covers(at)]
