"""The imported calendar (upload, refresh from its URL, the beat) and the feed keys."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from console.permissions import require
from pager import audit_texts as A
from pager import permissions
from pager.audit_texts import audit_reason
from pager.models import PagerProfile, Schedule
from pager.models.schedules import feed_key
from pager.schedules import selectors
from pager.schedules.ical_import import IcalError, IcalProblem, ical_events, ical_fetch, ical_shifts
from pager.schedules.services.checks import audit, schedule_get

logger = logging.getLogger(__name__)
# What an upload or a refresh checks of a calendar (the feeds' range).
CHECK_BACK, CHECK_AHEAD = timedelta(days=7), timedelta(days=60)


# --- the imported calendar -----------------------------------------------------------------
def _check(schedule: Schedule, text: str) -> tuple[int, list[IcalProblem]]:
    """IcalError unless `text` reads; its event count and unknown names (feeds' range)."""
    now = timezone.now()
    events = ical_events(
        text, selectors.schedule_zone(schedule), now - CHECK_BACK, now + CHECK_AHEAD
    )
    names = {name for event in events for name in event.names}
    return len(events), ical_shifts(events, selectors.people_named(names))[1]


@transaction.atomic
def schedule_ical_upload(*, schedule_id: int, text: str, actor: User) -> list[IcalProblem]:
    """Store an uploaded calendar as the schedule's lowest layer (MANAGE); IcalError for
    one that cannot be read. What it names that nobody answers to is returned. A
    schedule with an iCal URL replaces it at its next refresh."""
    require(actor, permissions.MANAGE, _("change the schedule's calendar"))
    schedule = schedule_get(schedule_id, lock=True)
    if len(text.encode()) > settings.PAGER_ICAL_MAX_BYTES:
        raise IcalError(
            gettext_noop("The calendar is larger than %(limit)s bytes."),
            params={"limit": settings.PAGER_ICAL_MAX_BYTES},
        )
    count, problems = _check(schedule, text)
    schedule.ical_text, schedule.ical_fetched_at, schedule.ical_error = text, timezone.now(), ""
    schedule.save(update_fields=["ical_text", "ical_fetched_at", "ical_error"])
    audit(
        actor,
        audit_reason(A.CALENDAR_UPLOADED, schedule=schedule.name, count=count),
        schedule=schedule.pk,
        events=count,
    )
    return problems


def schedule_ical_refresh(*, schedule_id: int) -> str:
    """Read the schedule's iCal URL again and store it (a calendar that fails keeps the
    last good one and records why). Network: not inside a transaction. The outcome, in
    English (beat logs, the page's message)."""
    schedule = schedule_get(schedule_id)
    if not schedule.ical_url:
        return f"schedule {schedule.pk} has no iCal URL"
    try:
        text = ical_fetch(schedule.ical_url)
        count, problems = _check(schedule, text)
    except IcalError as exc:
        _ical_store(schedule.pk, error=str(exc)[:500])
        return f"schedule {schedule.pk}: {exc}"
    _ical_store(schedule.pk, text=text)
    unknown = f", {len(problems)} name(s) nobody has" if problems else ""
    return f"schedule {schedule.pk}: read {count} event(s){unknown}"


@transaction.atomic
def _ical_store(schedule_id: int, *, text: str | None = None, error: str = "") -> None:
    fields: dict[str, Any] = {"ical_fetched_at": timezone.now(), "ical_error": error}
    if text is not None:
        fields["ical_text"] = text
    Schedule.objects.filter(pk=schedule_id).update(**fields)


def schedules_ical_refresh_due() -> int:
    """Refresh each calendar URL not read for its `ical_refresh_minutes` (beat). Each
    schedule is claimed by a committed update first, so two beats read it once. How
    many were read."""
    now = timezone.now()
    done = 0
    for pk, fetched_at, minutes in Schedule.objects.exclude(ical_url="").values_list(
        "pk", "ical_fetched_at", "ical_refresh_minutes"
    ):
        if fetched_at is not None and fetched_at > now - timedelta(minutes=max(1, minutes)):
            continue
        if not Schedule.objects.filter(pk=pk, ical_fetched_at=fetched_at).update(
            ical_fetched_at=now
        ):
            continue  # another worker took it
        try:
            logger.info("iCal refresh: %s", schedule_ical_refresh(schedule_id=pk))
        except Exception:  # one schedule's bug must not stop the others
            logger.exception("iCal refresh of schedule %s failed", pk)
        done += 1
    return done


# --- feeds ---------------------------------------------------------------------------------
@transaction.atomic
def pager_profile_ensure(*, user: User) -> PagerProfile:
    """The person's pager profile (made with defaults the first time)."""
    profile, _created = PagerProfile.objects.get_or_create(user=user)
    return profile


@transaction.atomic
def feed_key_rotate(
    *, schedule_id: int | None = None, user: User | None = None, actor: User
) -> str:
    """A new feed key (every subscription to the old address stops working): the
    schedule's (MANAGE), or `user`'s personal feed (the actor's own: OWN; someone
    else's: MANAGE). The new key."""
    key = feed_key()
    if schedule_id is not None:
        require(actor, permissions.MANAGE, _("change the schedule's feed address"))
        schedule = schedule_get(schedule_id, lock=True)
        schedule.feed_key = key
        schedule.save(update_fields=["feed_key"])
        audit(actor, audit_reason(A.FEED_CHANGED, schedule=schedule.name), schedule=schedule.pk)
        return key
    person = user or actor
    require(
        actor,
        permissions.OWN if person.pk == getattr(actor, "pk", None) else permissions.MANAGE,
        _("change this calendar feed's address"),
    )
    profile = pager_profile_ensure(user=person)
    profile.feed_key = key
    profile.save(update_fields=["feed_key"])
    said = audit_reason(A.PERSONAL_FEED_CHANGED, user=person.get_username())
    audit(actor, said, user=person.pk)
    return key
