"""An imported iCal calendar as the schedule's lowest layer.

Read with `icalendar`, repeats (RRULE, RDATE, EXDATE, RECURRENCE-ID changes) expanded by
`recurring_ical_events`. Each event names the person on call by its SUMMARY, else an
ATTENDEE's or the ORGANIZER's address: a username or an email address, any case. An
event nobody answers to is left out and reported (`IcalProblem`), never an error; a
calendar that cannot be read is an `IcalError` naming what is wrong. Times without a
zone (floating) and all-day events are read in the schedule's zone. Cancelled events
(STATUS:CANCELLED) are left out.

`ical_fetch` reads a calendar's URL through console.outgoing.user_request (the address
guard, an overall deadline of PAGER_ICAL_TIMEOUT_SECONDS, PAGER_ICAL_MAX_BYTES): it makes
a network call, so never call it inside a transaction. Messages name the host only: the
URL often carries a secret.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events
import requests
from django.conf import settings
from django.utils.translation import gettext, gettext_noop, ngettext

from console.errors import DomainError
from console.outgoing import DeadlineExceeded, OutgoingRefused, failure_reason, user_request
from pager.schedules.rotation import localise
from pager.schedules.shifts import ICAL, ICAL_LAYER, Shift


class IcalError(DomainError):
    code = "ical_invalid"


@dataclass(frozen=True)
class IcalEvent:
    """One occurrence: the names it could mean (lower case, in the order tried)."""

    starts_at: datetime
    ends_at: datetime
    names: tuple[str, ...]
    summary: str


@dataclass(frozen=True)
class IcalProblem:
    """Events whose names match nobody: what they said, how many, the first one's start."""

    names: tuple[str, ...]
    events: int
    first: datetime

    def __str__(self) -> str:
        names = ", ".join(f"“{name}”" for name in self.names) or gettext("(no name)")
        text = ngettext(
            "Nobody has the username or email address %(names)s: %(count)d event at "
            "%(first)s UTC is left out.",
            "Nobody has the username or email address %(names)s: %(count)d events from "
            "%(first)s UTC on are left out.",
            self.events,
        )
        return text % {
            "names": names,
            "count": self.events,
            "first": f"{self.first:%Y-%m-%d %H:%M}",
        }


# --- reading -------------------------------------------------------------------------------
def calendar_read(text: str) -> icalendar.Calendar:
    """The parsed calendar, or IcalError naming the first thing wrong with it."""
    if not text.strip():
        raise IcalError(gettext_noop("The calendar is empty."))
    return _parsed(text)


@functools.lru_cache(maxsize=32)
def _parsed(text: str) -> icalendar.Calendar:
    # Cached: the same stored text is read on every look at who is on call. Nothing
    # here changes a parsed calendar.
    try:
        calendar = icalendar.Calendar.from_ical(text)
    except ValueError as exc:
        raise IcalError(
            gettext_noop("This is not an iCal calendar: %(reason)s"),
            params={"reason": _reason(exc)},
        ) from None
    if not isinstance(calendar, icalendar.Calendar) or calendar.name != "VCALENDAR":
        raise IcalError(gettext_noop("The file does not begin with BEGIN:VCALENDAR."))
    for component in calendar.walk():
        for prop, reason in component.errors:
            raise IcalError(
                gettext_noop("%(component)s %(which)s has a broken %(property)s: %(reason)s"),
                params={
                    "component": component.name,
                    "which": _which(component),
                    "property": prop,
                    "reason": str(reason)[:200],
                },
            )
    return calendar


def ical_events(text: str, zone: ZoneInfo, start: datetime, end: datetime) -> list[IcalEvent]:
    """Every occurrence that overlaps [start, end), with repeats expanded."""
    calendar = calendar_read(text)
    try:
        occurrences = recurring_ical_events.of(calendar).between(start, end)
    except (ValueError, TypeError, KeyError) as exc:  # the libraries' InvalidCalendar kinds
        raise IcalError(
            gettext_noop("The calendar's repeats cannot be read: %(reason)s"),
            params={"reason": _reason(exc)},
        ) from None
    events = []
    for event in occurrences:
        if event.name != "VEVENT" or str(event.get("STATUS", "")).upper() == "CANCELLED":
            continue
        try:
            starts_at, ends_at = _instant(event.start, zone), _instant(event.end, zone)
        except (ValueError, TypeError, icalendar.InvalidCalendar) as exc:
            raise IcalError(
                gettext_noop("VEVENT %(which)s has no usable start or end: %(reason)s"),
                params={"which": _which(event), "reason": _reason(exc)},
            ) from None
        if ends_at > starts_at:
            summary = str(event.get("SUMMARY", "")).strip()
            events.append(IcalEvent(starts_at, ends_at, _names(event, summary), summary))
    return sorted(events, key=lambda e: (e.starts_at, e.ends_at))


def ical_shifts(
    events: Sequence[IcalEvent], people: Mapping[str, tuple[int, str]]
) -> tuple[list[Shift], list[IcalProblem]]:
    """Events as shifts of the people they name (`people`: lower-case username or email
    -> (user_id, username)), and what could not be matched, in order of first event."""
    shifts: list[Shift] = []
    unknown: dict[tuple[str, ...], list[IcalEvent]] = {}
    for event in events:
        person = next((people[n] for n in event.names if n in people), None)
        if person is None:
            unknown.setdefault(event.names, []).append(event)
            continue
        shifts.append(Shift(person[0], person[1], event.starts_at, event.ends_at, ICAL, ICAL_LAYER))
    problems = [IcalProblem(names, len(evs), evs[0].starts_at) for names, evs in unknown.items()]
    return shifts, sorted(problems, key=lambda p: p.first)


def event_names(events: Sequence[IcalEvent]) -> set[str]:
    return {name for event in events for name in event.names}


def _names(event: icalendar.Event, summary: str) -> tuple[str, ...]:
    names = [summary]
    attendees = event.get("ATTENDEE") or []
    if not isinstance(attendees, list):
        attendees = [attendees]
    names += [str(a) for a in attendees]
    names.append(str(event.get("ORGANIZER", "")))
    cleaned = (_address(name) for name in names)
    return tuple(dict.fromkeys(name for name in cleaned if name))


def _address(value: str) -> str:
    value = value.strip()
    if value.lower().startswith("mailto:"):
        value = value[len("mailto:") :]
    return value.strip().lower()


def _instant(value: date | datetime, zone: ZoneInfo) -> datetime:
    if not isinstance(value, datetime):  # an all-day event: midnight in the schedule's zone
        return localise(datetime.combine(value, time(0)), zone)
    if value.tzinfo is None:  # floating time: the schedule's wall clock
        return localise(value, zone)
    return value.astimezone(UTC)


def _which(component: icalendar.cal.Component) -> str:
    label = str(component.get("SUMMARY") or component.get("UID") or component.get("TZID") or "")
    return f"“{label[:80]}”" if label else ""


def _reason(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0][:200]


# --- fetching ------------------------------------------------------------------------------
def ical_fetch(url: str) -> str:
    """The calendar at `url` as text, or IcalError saying why not. Network: never call
    inside a transaction."""
    host = urlsplit(url).hostname or "?"
    timeout = float(settings.PAGER_ICAL_TIMEOUT_SECONDS)
    limit = int(settings.PAGER_ICAL_MAX_BYTES)
    try:
        response = user_request(
            "GET",
            url,
            deadline=timeout,
            allow_redirects=True,  # calendar hosts redirect; each hop is checked again
            headers={"Accept": "text/calendar"},
            max_bytes=limit + 1,  # one byte past the limit tells a calendar too big
        )
    except OutgoingRefused as exc:
        raise IcalError(
            gettext_noop("The calendar's URL is refused: %(reason)s"),
            params={"reason": str(exc)},
        ) from None
    except (DeadlineExceeded, requests.Timeout):
        raise IcalError(
            gettext_noop("%(host)s did not send the calendar within %(seconds)s s."),
            params={"host": host, "seconds": f"{timeout:g}"},
        ) from None
    except requests.RequestException as exc:
        raise IcalError(
            gettext_noop("Could not reach %(host)s: %(reason)s"),
            params={"host": host, "reason": failure_reason(exc)},
        ) from None
    if response.status_code != 200:
        raise IcalError(
            gettext_noop("%(host)s answered HTTP %(status)s instead of the calendar."),
            params={"host": host, "status": response.status_code},
        )
    declared = response.headers.get("Content-Length", "")
    body = response.content
    if len(body) > limit or (declared.isdigit() and int(declared) > limit):
        raise IcalError(
            gettext_noop("The calendar at %(host)s is larger than %(limit)s bytes."),
            params={"host": host, "limit": limit},
        )
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise IcalError(
            gettext_noop("The calendar at %(host)s is not UTF-8 text."), params={"host": host}
        ) from None
