"""Who is on call: the reads pages, the API, escalation and the feeds share.

A schedule's final shifts are its rotations (pager/schedules/rotation.py), laid over
each other and over the imported calendar, with the live overrides on top
(pager/schedules/layers.py). A fixed number of queries per schedule (rotations with
their members, overrides, and the people an imported calendar names).
"""

from __future__ import annotations

import logging
import zoneinfo
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db.models import Prefetch, Q, QuerySet
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext_noop

from console.errors import NotFound
from pager.models import (
    Override,
    PagerProfile,
    Rotation,
    RotationMember,
    Schedule,
)
from pager.schedules import layers
from pager.schedules.ical_import import (
    IcalError,
    IcalProblem,
    event_names,
    ical_events,
    ical_shifts,
)
from pager.schedules.rotation import RotationPlan, rotation_shifts, wall_clock
from pager.schedules.shifts import OVERRIDE_LAYER, OnCall, Shift

logger = logging.getLogger(__name__)

# How far around a moment "now" and "next" look: a shift begun longer ago is shown from
# here, a next shift further off is not shown.
LOOK_BACK = timedelta(days=7)
LOOK_AHEAD = timedelta(days=35)


def schedule_zone(schedule: Schedule) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(schedule.time_zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo("UTC")  # the model validates it; a bad row still pages


def rotation_plan(rotation: Rotation, zone: zoneinfo.ZoneInfo) -> RotationPlan:
    """The arithmetic's view of a rotation whose memberships (with users) are loaded."""
    members = tuple(
        (m.user_id, m.user.get_username())
        for m in sorted(rotation.memberships.all(), key=lambda m: m.position)
    )
    return RotationPlan(
        name=rotation.name,
        zone=zone,
        starts_at=wall_clock(rotation.starts_at),
        members=members,
        frequency=rotation.frequency,
        interval=rotation.interval,
        shift_hours=rotation.shift_hours,
        ends_at=wall_clock(rotation.ends_at) if rotation.ends_at else None,
        restrict_weekdays=tuple(
            d for d in map(int, rotation.restrict_weekdays or ()) if 0 <= d <= 6
        ),
        restrict_start=rotation.restrict_start,
        restrict_end=rotation.restrict_end,
        priority=rotation.priority,
    )


def override_shift(override: Override) -> Shift:
    return Shift(
        user_id=override.user_id,
        username=override.user.get_username(),
        starts_at=override.starts_at,
        ends_at=override.ends_at,
        source=override.source,
        layer=OVERRIDE_LAYER,
        replaces_id=override.replaces_id,
    )


# --- the final shifts ----------------------------------------------------------------------
def shifts_between(schedule: Schedule, start: datetime, end: datetime) -> list[Shift]:
    """The final shifts of `schedule` inside [start, end), in order, never overlapping."""
    return shifts_between_many([schedule], start, end)[schedule.pk]


def oncall_at(schedule: Schedule, at: datetime) -> list[Shift]:
    """Who is on call at `at` (no one: empty), with the shift as seen from `at`."""
    return layers.oncall_at(shifts_between(schedule, at - LOOK_BACK, at + LOOK_AHEAD), at)


def oncall_now_and_next(schedule: Schedule, at: datetime | None = None) -> OnCall:
    return oncall_now_and_next_many([schedule], at)[schedule.pk]


def oncall_now_and_next_many(
    schedules: Sequence[Schedule], at: datetime | None = None
) -> dict[int, OnCall]:
    """oncall_now_and_next of several schedules, read together (schedule pk -> OnCall)."""
    at = at or timezone.now()
    return {
        pk: OnCall(
            now=layers.oncall_at(shifts, at),
            next=next((s for s in shifts if s.starts_at > at), None),
        )
        for pk, shifts in shifts_between_many(schedules, at - LOOK_BACK, at + LOOK_AHEAD).items()
    }


def person_shifts(user: User, start: datetime, end: datetime) -> list[tuple[Schedule, Shift]]:
    """`user`'s final shifts in every schedule, in order of start."""
    schedules = list(
        Schedule.objects.filter(
            Q(team__members=user)
            | Q(rotations__memberships__user=user)
            | Q(overrides__user=user)
            | ~Q(ical_text="")
        )
        .distinct()
        .select_related("team")
        .order_by("pk")
    )
    by_schedule = shifts_between_many(schedules, start, end)
    found = [
        (schedule, shift)
        for schedule in schedules
        for shift in by_schedule[schedule.pk]
        if shift.user_id == user.pk
    ]
    return sorted(found, key=lambda pair: (pair[1].starts_at, pair[0].pk))


def shifts_between_many(
    schedules: Sequence[Schedule], start: datetime, end: datetime
) -> dict[int, list[Shift]]:
    """shifts_between of several schedules (pk -> shifts): rotations, members and
    overrides of all of them in three queries, plus one per imported calendar."""
    ids = [s.pk for s in schedules]
    rotations: dict[int, list[Rotation]] = defaultdict(list)
    members = RotationMember.objects.select_related("user").order_by("position")
    for rotation in Rotation.objects.filter(schedule_id__in=ids).prefetch_related(
        Prefetch("memberships", queryset=members)
    ):  # Meta ordering: highest priority first, then the older rotation
        rotations[rotation.schedule_id].append(rotation)
    overrides: dict[int, list[Shift]] = defaultdict(list)
    for override in overrides_between(ids, start, end):
        overrides[override.schedule_id].append(override_shift(override))
    result = {}
    for schedule in schedules:
        zone = schedule_zone(schedule)
        result[schedule.pk] = layers.combine(
            layers=[
                rotation_shifts(rotation_plan(r, zone), start, end) for r in rotations[schedule.pk]
            ],
            overrides=overrides[schedule.pk],
            ical=ical_layer(schedule, start, end)[0] if schedule.ical_text else [],
            start=start,
            end=end,
        )
    return result


# --- the imported calendar -----------------------------------------------------------------
def ical_layer(
    schedule: Schedule, start: datetime, end: datetime
) -> tuple[list[Shift], list[IcalProblem | IcalError]]:
    """The stored calendar's shifts in [start, end) and what is wrong with it (names
    nobody has; a calendar that cannot be read gives no shifts and its error)."""
    if not schedule.ical_text:
        return [], []
    try:
        events = ical_events(schedule.ical_text, schedule_zone(schedule), start, end)
    except IcalError as exc:
        logger.warning("schedule %s: the stored calendar cannot be read: %s", schedule.pk, exc)
        return [], [exc]
    shifts, problems = ical_shifts(events, people_named(event_names(events)))
    return shifts, list(problems)


def ical_problems(
    schedule: Schedule, start: datetime | None = None, end: datetime | None = None
) -> list[str]:
    """What the operator should fix in the imported calendar (in the page's language),
    over the feeds' range unless told: unknown names, a calendar that cannot be read."""
    now = timezone.now()
    problems = ical_layer(
        schedule, start or now - timedelta(days=7), end or now + timedelta(days=60)
    )[1]
    return [p.translated() if isinstance(p, IcalError) else str(p) for p in problems]


def people_named(names: Iterable[str]) -> dict[str, tuple[int, str]]:
    """Lower-case username or email -> (user_id, username), for active users; a username
    wins over someone else's email address, then the older account."""
    wanted = {name.lower() for name in names if name}
    if not wanted:
        return {}
    users = (
        User.objects.filter(is_active=True)
        .annotate(lower_username=Lower("username"), lower_email=Lower("email"))
        .filter(Q(lower_username__in=wanted) | Q(lower_email__in=wanted))
        .order_by("pk")
        .values_list("pk", "username", "lower_username", "lower_email")
    )
    rows = list(users)
    people: dict[str, tuple[int, str]] = {}
    for pk, username, lower_username, _ in rows:
        people.setdefault(lower_username, (pk, username))
    for pk, username, _, lower_email in rows:
        if lower_email:
            people.setdefault(lower_email, (pk, username))
    return people


# --- rows the pages and the API list -------------------------------------------------------
def overrides_between(
    schedule_ids: Iterable[int], start: datetime, end: datetime
) -> QuerySet[Override]:
    """Live (not cancelled) overrides meeting [start, end), oldest created first."""
    return (
        Override.objects.filter(
            schedule_id__in=list(schedule_ids),
            cancelled_at__isnull=True,
            starts_at__lt=end,
            ends_at__gt=start,
        )
        .select_related("user", "replaces", "created_by")
        .order_by("created_at", "pk")
    )


def schedule_by_feed_key(key: str) -> Schedule:
    """The schedule whose export feed has this key (NotFound: a 404)."""
    schedule = Schedule.objects.filter(feed_key=key).first() if key else None
    if schedule is None:
        raise NotFound(gettext_noop("No calendar feed has this address."))
    return schedule


def profile_by_feed_key(key: str) -> PagerProfile:
    profile = (
        PagerProfile.objects.filter(feed_key=key, user__is_active=True)
        .select_related("user")
        .first()
        if key
        else None
    )
    if profile is None:
        raise NotFound(gettext_noop("No calendar feed has this address."))
    return profile
