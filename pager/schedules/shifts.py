"""What the schedule arithmetic produces: who is on call from when to when, and why
(the rotation, an override, a taken shift, a swap, the imported calendar)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

# Shift.source
ROTATION = "rotation"
OVERRIDE = "override"
TAKE = "take"
SWAP = "swap"
ICAL = "ical"

# Shift.layer for the layers that are not rotations (a rotation's layer is its name).
ICAL_LAYER = "iCal"
OVERRIDE_LAYER = "override"


@dataclass(frozen=True)
class Shift:
    """`user_id` is on call from `starts_at` to `ends_at` (aware, end excluded)."""

    user_id: int
    username: str
    starts_at: datetime
    ends_at: datetime
    source: str
    layer: str
    replaces_id: int | None = None

    def covers(self, at: datetime) -> bool:
        return self.starts_at <= at < self.ends_at

    def clipped(self, start: datetime, end: datetime) -> Shift | None:
        """This shift cut to [start, end), or None when nothing is left."""
        starts_at, ends_at = max(self.starts_at, start), min(self.ends_at, end)
        if starts_at >= ends_at:
            return None
        return replace(self, starts_at=starts_at, ends_at=ends_at)


@dataclass(frozen=True)
class OnCall:
    """Who is on call at a moment (empty: nobody) and the next shift to begin after it."""

    now: list[Shift]
    next: Shift | None
