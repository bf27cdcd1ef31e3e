"""What every change to a schedule checks and records (pager/schedules/services/)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext_noop

from console.audit.models import AuditKind, AuditMethod
from console.audit.services import audit_record
from console.errors import DomainError, NotFound
from pager.models import Override, Schedule
from pager.schedules.shifts import Shift

MAX_LENGTH = timedelta(days=31)
# The audit log's kind and method for these changes (console/audit/models.py choices:
# see the notes; stored as plain strings).
AUDIT_KIND = AuditKind.ONCALL_CHANGED
AUDIT_METHOD = AuditMethod.PAGER


def utc(at: datetime) -> str:
    """An instant as the audit log's text shows it."""
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def schedule_get(schedule_id: int, *, lock: bool = False) -> Schedule:
    rows = Schedule.objects.select_related("team")
    if lock:
        rows = rows.select_for_update(of=("self",))
    schedule = rows.filter(pk=schedule_id).first()
    if schedule is None:
        raise NotFound(gettext_noop("There is no schedule %(id)s."), params={"id": schedule_id})
    return schedule


def window_check(
    starts_at: datetime, ends_at: datetime, *, from_now: bool
) -> tuple[datetime, datetime]:
    if timezone.is_naive(starts_at) or timezone.is_naive(ends_at):
        raise DomainError(gettext_noop("Give the start and end with their time zone."))
    if ends_at <= starts_at:
        raise DomainError(gettext_noop("The end must be after the start."), code="invalid")
    if ends_at - starts_at > MAX_LENGTH:
        raise DomainError(
            gettext_noop("A change may last at most %(days)s days; make several."),
            code="invalid",
            params={"days": MAX_LENGTH.days},
        )
    now = timezone.now()
    if ends_at <= now:
        raise DomainError(gettext_noop("That time is already over."), code="invalid")
    return (max(starts_at, now) if from_now else starts_at), ends_at


def member_check(schedule: Schedule, user: User) -> None:
    if not schedule.team.members.filter(pk=user.pk).exists():
        raise DomainError(
            gettext_noop("%(person)s is not a member of team %(team)s."),
            code="invalid",
            params={"person": user.get_username(), "team": schedule.team.name},
        )


def covers_all(shifts: list[Shift], user_id: int, starts_at: datetime, ends_at: datetime) -> bool:
    """Whether `shifts` (final, cut to the window) put `user_id` on call all of it."""
    edge = starts_at
    for shift in shifts:
        if shift.user_id != user_id or shift.starts_at != edge:
            return False
        edge = shift.ends_at
    return edge >= ends_at


def replaced_by(shifts: list[Shift], user_id: int) -> int | None:
    """Who the new person covers for: the first other person on call in the window."""
    return next((s.user_id for s in shifts if s.user_id != user_id), None)


def audit(actor: User | None, reason: str, **new: Any) -> None:
    values = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in new.items()}
    audit_record(kind=AUDIT_KIND, method=AUDIT_METHOD, user=actor, reason=reason, new=values)


def override_end(override: Override, now: datetime) -> str:
    """Cancel an override not yet begun; end one that has begun now. Which it was."""
    if override.starts_at < now:
        override.ends_at = now
        override.save(update_fields=["ends_at"])
        return "ended"
    override.cancelled_at = now
    override.save(update_fields=["cancelled_at"])
    return "cancelled"
