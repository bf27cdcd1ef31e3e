"""Calendar feeds (iCal): a schedule's final shifts, or one person's shifts in every
schedule, one VEVENT per shift, times in UTC. A calendar application subscribes to the
feed's secret address (pager/schedules/feeds.py) and reads it again now and then.

Each event's UID is a hash of the schedule, person, source, layer and start, so it stays
the same from one reading to the next and the application updates the event in place
(its end moves when a shift is cut or extended). The first event of a feed is cut at
the start of its range (a shift that began before it); the range moves a day at a time,
so that event's UID changes at most once a day.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import icalendar
from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext

from pager.models import Schedule
from pager.schedules import selectors
from pager.schedules.shifts import ICAL, OVERRIDE, ROTATION, SWAP, TAKE, Shift

PRODID = "-//vllm-incident-console//pager//EN"
PAST, FUTURE = timedelta(days=7), timedelta(days=60)


def feed_range(now: datetime | None = None) -> tuple[datetime, datetime]:
    """The feeds' range: the past 7 days and the next 60, on whole UTC days."""
    today = (
        (now or timezone.now()).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    )
    return today - PAST, today + timedelta(days=1) + FUTURE


def schedule_feed(schedule: Schedule, start: datetime, end: datetime) -> bytes:
    shifts = selectors.shifts_between(schedule, start, end)
    calendar = _calendar(gettext("On call: %(schedule)s") % {"schedule": schedule.name})
    _add(calendar, ((schedule, shift) for shift in shifts))
    return bytes(calendar.to_ical())


def person_feed(user: User, start: datetime, end: datetime) -> bytes:
    calendar = _calendar(gettext("On call: %(person)s") % {"person": user.get_username()})
    _add(calendar, selectors.person_shifts(user, start, end))
    return bytes(calendar.to_ical())


def shift_uid(schedule: Schedule, shift: Shift) -> str:
    starts_at = shift.starts_at.astimezone(UTC).isoformat()
    key = f"{schedule.pk}|{shift.user_id}|{shift.source}|{shift.layer}|{starts_at}"
    return f"{hashlib.sha256(key.encode()).hexdigest()[:32]}@pager"


def _calendar(name: str) -> icalendar.Calendar:
    calendar = icalendar.Calendar()
    calendar.add("PRODID", PRODID)
    calendar.add("VERSION", "2.0")
    calendar.add("CALSCALE", "GREGORIAN")
    calendar.add("METHOD", "PUBLISH")
    calendar.add("X-WR-CALNAME", name)
    return calendar


def _why(shift: Shift) -> str:
    texts = {
        ROTATION: gettext("Rotation %(layer)s"),
        ICAL: gettext("Imported calendar"),
        OVERRIDE: gettext("Override"),
        TAKE: gettext("Took the shift"),
        SWAP: gettext("Swap"),
    }
    return texts.get(shift.source, shift.source) % {"layer": shift.layer}


def _add(calendar: icalendar.Calendar, shifts: Iterable[tuple[Schedule, Shift]]) -> None:
    stamp = timezone.now().astimezone(UTC).replace(microsecond=0)
    for schedule, shift in shifts:
        event = icalendar.Event()
        event.add("UID", shift_uid(schedule, shift))
        event.add("DTSTAMP", stamp)
        event.add("DTSTART", shift.starts_at.astimezone(UTC))
        event.add("DTEND", shift.ends_at.astimezone(UTC))
        event.add(
            "SUMMARY",
            gettext("On call: %(schedule)s (%(person)s)")
            % {"schedule": schedule.name, "person": shift.username},
        )
        event.add("DESCRIPTION", _why(shift))
        event.add("TRANSP", "TRANSPARENT")  # being on call does not make a person busy
        calendar.add_component(event)
