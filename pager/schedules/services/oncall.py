"""Who is on call instead: overrides (MANAGE), taking a shift and swaps (OWN)."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from console.errors import DomainError, NotFound
from console.permissions import require
from pager import audit_texts as A
from pager import permissions
from pager.audit_texts import audit_reason
from pager.models import Override, OverrideSource, Schedule, ShiftSwap, SwapState
from pager.schedules import selectors
from pager.schedules.services.checks import (
    audit,
    covers_all,
    member_check,
    override_end,
    replaced_by,
    schedule_get,
    utc,
    window_check,
)


# --- overrides -----------------------------------------------------------------------------
@transaction.atomic
def override_create(
    *,
    schedule_id: int,
    user_id: int,
    starts_at: datetime,
    ends_at: datetime,
    actor: User,
    reason: str = "",
) -> Override:
    """`user_id` on call from `starts_at` to `ends_at`, above every layer (MANAGE)."""
    require(actor, permissions.MANAGE, _("create overrides"))
    schedule = schedule_get(schedule_id, lock=True)
    person = User.objects.filter(pk=user_id, is_active=True).first()
    if person is None:
        raise NotFound(gettext_noop("There is no active person %(id)s."), params={"id": user_id})
    starts_at, ends_at = window_check(starts_at, ends_at, from_now=False)
    member_check(schedule, person)
    before = selectors.shifts_between(schedule, starts_at, ends_at)
    return _override_make(
        schedule,
        person,
        starts_at,
        ends_at,
        OverrideSource.OVERRIDE,
        replaced_by(before, person.pk),
        actor,
        reason,
    )


def _override_make(
    schedule: Schedule,
    person: User,
    starts_at: datetime,
    ends_at: datetime,
    source: str,
    replaces_id: int | None,
    actor: User,
    reason: str,
) -> Override:
    override = Override.objects.create(
        schedule=schedule,
        user=person,
        starts_at=starts_at,
        ends_at=ends_at,
        source=source,
        replaces_id=replaces_id,
        reason=reason[:500],
        created_by=actor,
    )
    audit(
        actor,
        audit_reason(
            A.ON_CALL,
            user=person.get_username(),
            schedule=schedule.name,
            starts=utc(starts_at),
            ends=utc(ends_at),
            override_source=source,
        ),
        schedule=schedule.pk,
        override=override.pk,
        user=person.pk,
        starts_at=starts_at,
        ends_at=ends_at,
        source=source,
        replaces=replaces_id,
    )
    return override


@transaction.atomic
def override_cancel(*, override_id: int, actor: User) -> Override:
    """Cancel an override (one not begun) or end it now (one begun). MANAGE; OWN for a
    person's own take. An accepted swap's override cancels the swap too."""
    override = (
        Override.objects.select_for_update(of=("self",))
        .select_related("schedule", "user")
        .filter(pk=override_id)
        .first()
    )
    if override is None:
        raise NotFound(gettext_noop("There is no override %(id)s."), params={"id": override_id})
    own_take = (
        override.user_id == getattr(actor, "pk", None) and override.source == OverrideSource.TAKE
    )
    require(actor, permissions.OWN if own_take else permissions.MANAGE, _("cancel this override"))
    now = timezone.now()
    if override.cancelled_at is not None:
        raise DomainError(gettext_noop("This override is already cancelled."))
    if override.ends_at <= now:
        raise DomainError(gettext_noop("This override is already over."))
    how = override_end(override, now)
    ShiftSwap.objects.filter(override=override, state=SwapState.ACCEPTED).update(
        state=SwapState.CANCELLED, decided_at=now
    )
    audit(
        actor,
        audit_reason(
            A.OVERRIDE_ENDS[how],
            id=override.pk,
            user=override.user.get_username(),
            schedule=override.schedule.name,
        ),
        schedule=override.schedule_id,
        override=override.pk,
        outcome=how,
    )
    return override


@transaction.atomic
def shift_take(
    *,
    schedule_id: int,
    starts_at: datetime,
    ends_at: datetime,
    actor: User,
    reason: str = "",
) -> Override:
    """The actor goes on call from `starts_at` (now at the earliest) to `ends_at`,
    covering for whoever was (`replaces`). OWN."""
    require(actor, permissions.OWN, _("take a shift"))
    schedule = schedule_get(schedule_id, lock=True)
    starts_at, ends_at = window_check(starts_at, ends_at, from_now=True)
    member_check(schedule, actor)
    before = selectors.shifts_between(schedule, starts_at, ends_at)
    if covers_all(before, actor.pk, starts_at, ends_at):
        raise DomainError(gettext_noop("You are already on call for all of that time."))
    return _override_make(
        schedule,
        actor,
        starts_at,
        ends_at,
        OverrideSource.TAKE,
        replaced_by(before, actor.pk),
        actor,
        reason,
    )


# --- swaps ---------------------------------------------------------------------------------
@transaction.atomic
def swap_request(
    *,
    schedule_id: int,
    starts_at: datetime,
    ends_at: datetime,
    actor: User,
    note: str = "",
) -> ShiftSwap:
    """Ask someone to cover time the actor is on call for. OWN."""
    require(actor, permissions.OWN, _("ask for a swap"))
    schedule = schedule_get(schedule_id, lock=True)
    starts_at, ends_at = window_check(starts_at, ends_at, from_now=True)
    if not covers_all(
        selectors.shifts_between(schedule, starts_at, ends_at), actor.pk, starts_at, ends_at
    ):
        raise DomainError(
            gettext_noop("You can only ask for a swap of time you are on call for."), code="invalid"
        )
    if ShiftSwap.objects.filter(
        schedule=schedule,
        requester=actor,
        state=SwapState.OPEN,
        starts_at__lt=ends_at,
        ends_at__gt=starts_at,
    ).exists():
        raise DomainError(gettext_noop("You already asked for a swap of part of that time."))
    swap = ShiftSwap.objects.create(
        schedule=schedule, requester=actor, starts_at=starts_at, ends_at=ends_at, note=note[:500]
    )
    audit(
        actor,
        audit_reason(
            A.SWAP_ASKED,
            user=actor.get_username(),
            schedule=schedule.name,
            starts=utc(starts_at),
            ends=utc(ends_at),
        ),
        schedule=schedule.pk,
        swap=swap.pk,
        starts_at=starts_at,
        ends_at=ends_at,
    )
    return swap


def _swap(swap_id: int) -> ShiftSwap:
    swap = (
        ShiftSwap.objects.select_for_update(of=("self",))
        .select_related("schedule__team", "requester")
        .filter(pk=swap_id)
        .first()
    )
    if swap is None:
        raise NotFound(gettext_noop("There is no swap %(id)s."), params={"id": swap_id})
    return swap


@transaction.atomic
def swap_accept(*, swap_id: int, actor: User) -> ShiftSwap:
    """The actor covers the swap's time (from now at the earliest): an Override (source
    swap) replacing the requester. OWN; not the requester; a member of the team."""
    require(actor, permissions.OWN, _("accept a swap"))
    swap = _swap(swap_id)
    if swap.state != SwapState.OPEN:
        raise DomainError(gettext_noop("This swap is no longer open."))
    if swap.requester_id == actor.pk:
        raise DomainError(gettext_noop("You cannot accept your own swap."), code="invalid")
    schedule = swap.schedule
    starts_at, ends_at = window_check(swap.starts_at, swap.ends_at, from_now=True)
    member_check(schedule, actor)
    now_on_call = selectors.shifts_between(schedule, starts_at, ends_at)
    if not covers_all(now_on_call, swap.requester_id, starts_at, ends_at):
        raise DomainError(
            gettext_noop("%(person)s is no longer on call for all of that time."),
            params={"person": swap.requester.get_username()},
        )
    override = _override_make(
        schedule,
        actor,
        starts_at,
        ends_at,
        OverrideSource.SWAP,
        swap.requester_id,
        actor,
        swap.note,
    )
    swap.state, swap.taker, swap.override, swap.decided_at = (
        SwapState.ACCEPTED,
        actor,
        override,
        timezone.now(),
    )
    swap.save(update_fields=["state", "taker", "override", "decided_at"])
    return swap


@transaction.atomic
def swap_cancel(*, swap_id: int, actor: User) -> ShiftSwap:
    """Withdraw an open swap (its requester, MANAGE), or undo an accepted one (either
    person, MANAGE): its override is cancelled, or ended now if it has begun."""
    swap = _swap(swap_id)
    parties = {swap.requester_id} | ({swap.taker_id} if swap.state == SwapState.ACCEPTED else set())
    mine = getattr(actor, "pk", None) in parties
    require(actor, permissions.OWN if mine else permissions.MANAGE, _("cancel this swap"))
    if swap.state == SwapState.CANCELLED:
        raise DomainError(gettext_noop("This swap is already cancelled."))
    now = timezone.now()
    override = None
    if swap.state == SwapState.ACCEPTED and swap.override_id is not None:
        override = Override.objects.select_for_update().filter(pk=swap.override_id).first()
    if override is not None and override.cancelled_at is None:
        if override.ends_at <= now:
            raise DomainError(gettext_noop("This swap is already over."))
        override_end(override, now)
    swap.state, swap.decided_at = SwapState.CANCELLED, now
    swap.save(update_fields=["state", "decided_at"])
    audit(
        actor,
        audit_reason(A.SWAP_CANCELLED, id=swap.pk, schedule=swap.schedule.name),
        schedule=swap.schedule_id,
        swap=swap.pk,
    )
    return swap
