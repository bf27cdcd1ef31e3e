"""Integer epoch seconds as PostgreSQL COPY text and as ISO 8601, fast: a table of day
prefixes and one of the 86,400 times of day, so formatting a moment is two lookups and
a concatenation (hundreds of millions of them in a year)."""

from __future__ import annotations

from datetime import UTC, datetime

DAY = 86_400
_TOD = tuple(f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(DAY))


class Clock:
    def __init__(self, start: int, end: int) -> None:
        self.first = start // DAY - 2
        days = range(self.first, end // DAY + 3)
        dates = [datetime.fromtimestamp(d * DAY, UTC).strftime("%Y-%m-%d") for d in days]
        self._sp = tuple(d + " " for d in dates)
        self._t = tuple(d + "T" for d in dates)

    def ts(self, t: int) -> str:
        """COPY text of a timestamptz."""
        return self._sp[t // DAY - self.first] + _TOD[t % DAY] + "+00"

    def iso(self, t: int) -> str:
        """As datetime.isoformat() writes an aware UTC moment (JSON payloads)."""
        return self._t[t // DAY - self.first] + _TOD[t % DAY] + "+00:00"

    @staticmethod
    def date(t: int) -> str:
        """A date (due dates run past the year's end, beyond the tables)."""
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")


def esc(value: str) -> str:
    """A text value for COPY's text format."""
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        value = value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
        value = value.replace("\r", "\\r")
    return value


def opt(clock: Clock, t: int) -> str:
    """A nullable moment (0: NULL)."""
    return clock.ts(t) if t else "\\N"
