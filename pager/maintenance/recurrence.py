"""A maintenance window's occurrences: the first one (starts_at..ends_at) repeated by an
RFC 5545 RRULE in the window's time zone, wall-clock: "every Tuesday 02:00 Europe/Berlin"
stays at 02:00 on either side of a daylight-saving change. Every occurrence lasts as
long as the first (an absolute duration). No database access.

The RRULE is the rule only (`FREQ=WEEKLY;BYDAY=TU`, an `RRULE:` prefix allowed); the
first occurrence is its DTSTART, always an occurrence even if the rule would not produce
it (RFC 5545 counts DTSTART as the first instance). UNTIL may be local or UTC (`Z`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import islice, pairwise
from zoneinfo import ZoneInfo

from dateutil.rrule import rrule, rruleset, rrulestr

# Occurrences more often than hourly are not maintenance, and would make the lists huge.
_FREQ_ALLOWED = ("HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")
MAX_TEXT = 500


class RecurrenceError(ValueError):
    """The RRULE cannot be used; the message says why, for a person."""


@dataclass(frozen=True)
class Series:
    """A window's occurrences, ready to be listed."""

    first_start: datetime  # aware, UTC
    duration: timedelta
    rules: rruleset | None  # None: once
    naive: bool  # the rule runs on naive local times (its UNTIL had no zone)
    zone: ZoneInfo
    # The first start's fraction of a second, which rrule drops: added back to each.
    offset: timedelta = timedelta(0)

    def utc(self, generated: datetime) -> datetime:
        aware = generated.replace(tzinfo=self.zone) if self.naive else generated
        return aware.astimezone(UTC) + self.offset

    def between(self, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
        """The occurrences overlapping [start, end), in UTC, in order."""
        if self.rules is None:
            occ_end = self.first_start + self.duration
            return (
                [(self.first_start, occ_end)] if self.first_start < end and occ_end > start else []
            )
        after = start - self.duration - self.offset - timedelta(seconds=1)
        before = end - self.offset + timedelta(seconds=1)
        if self.naive:
            after = after.astimezone(self.zone).replace(tzinfo=None)
            before = before.astimezone(self.zone).replace(tzinfo=None)
        found = []
        for generated in self.rules.between(after, before, inc=True):
            occ_start = self.utc(generated)
            found.append((occ_start, occ_start + self.duration))
        return [(s, e) for s, e in found if s < end and e > start]


def rule_text(recurrence: str) -> str:
    text = " ".join((recurrence or "").split())
    return text[len("RRULE:") :] if text.upper().startswith("RRULE:") else text


def series(*, starts_at: datetime, ends_at: datetime, recurrence: str, time_zone: str) -> Series:
    """RecurrenceError for a rule that cannot be used (the message names the problem)."""
    zone = ZoneInfo(time_zone)
    offset = timedelta(microseconds=starts_at.microsecond)
    first = starts_at.astimezone(zone).replace(microsecond=0)
    duration = ends_at - starts_at
    text = rule_text(recurrence)
    if not text:
        return Series(starts_at.astimezone(UTC), duration, None, False, zone)
    _check_text(text)
    naive = False
    try:
        rule = rrulestr(text, dtstart=first)
    except ValueError as exc:
        if "UNTIL" not in str(exc):
            raise RecurrenceError(f"not a valid RRULE: {exc}") from None
        # UNTIL written without a zone: the rule runs on local wall-clock times.
        naive = True
        try:
            rule = rrulestr(text, dtstart=first.replace(tzinfo=None))
        except ValueError as again:
            raise RecurrenceError(f"not a valid RRULE: {again}") from None
    if not isinstance(rule, rrule):
        raise RecurrenceError("give one RRULE (no RDATE, EXDATE or several rules)")
    rules = rruleset()
    rules.rrule(rule)
    rules.rdate(first.replace(tzinfo=None) if naive else first)
    return Series(starts_at.astimezone(UTC), duration, rules, naive, zone, offset)


def _check_text(text: str) -> None:
    if len(text) > MAX_TEXT:
        raise RecurrenceError(f"longer than {MAX_TEXT} characters")
    if "DTSTART" in text.upper():
        raise RecurrenceError("leave DTSTART out: the window's start is the first occurrence")
    parts = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if not sep:
            raise RecurrenceError(f"{part!r} is not NAME=VALUE")
        parts[key.strip().upper()] = value.strip().upper()
    freq = parts.get("FREQ")
    if not freq:
        raise RecurrenceError("FREQ is missing (e.g. FREQ=WEEKLY;BYDAY=TU)")
    if freq not in _FREQ_ALLOWED:
        raise RecurrenceError(f"FREQ={freq} repeats too often; at most hourly")


def overlaps_itself(s: Series) -> bool:
    """Whether an occurrence would begin before the one before it ends (the first few
    looked at: a rule's spacing shows in them)."""
    if s.rules is None:
        return False
    starts = [s.utc(generated) for generated in islice(s.rules, 30)]
    return any(b < a + s.duration for a, b in pairwise(starts))
