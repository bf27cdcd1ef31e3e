"""Acknowledgement, its expiry, and stopping: what ends (or pauses) an escalation's
paging. The receiver's tasks call these; the advance and the tick call them too when a
change reached the incident but its task did not (lost with the broker, or still
queued), so an acknowledgement or a resolution is never paged over."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.permissions import require
from incidents import permissions as incident_perms
from incidents.models import IncidentStatus, TimelineEvent, TimelineEventType
from pager.escalation.steps import username_of
from pager.escalation.timeline import Entries, expiry_parts, part, reason_parts
from pager.models import Escalation, EscalationState, Page, PageStatus
from pager.transitions import escalation_move

S = EscalationState
IS = IncidentStatus

REASON_MITIGATED = "incident mitigated"
REASON_RESOLVED = "incident resolved"
STOP_REASONS: dict[str, str] = {IS.MITIGATED: REASON_MITIGATED, IS.RESOLVED: REASON_RESOLVED}


def new_round(escalation: Escalation, now: datetime) -> None:
    escalation.repage_round += 1
    escalation_move(escalation, S.ACTIVE)
    escalation.step_index, escalation.loop = 0, 0
    escalation.next_due_at = now


def ack_expiry(escalation: Escalation, now: datetime) -> datetime | None:
    minutes = escalation.policy.ack_timeout_minutes if escalation.policy else None
    return now + timedelta(minutes=minutes) if minutes else None


def acknowledged_meanwhile(escalation: Escalation) -> tuple[int | None] | None:
    """(who,) when an acknowledgement reached the incident but not this escalation (its
    task lost with the broker, or still queued): the incident acknowledged since paging
    began, or a page of this re-paging round acknowledged by its link."""
    if escalation.incident.status != IS.ACKNOWLEDGED:
        return None
    if escalation.acknowledged_at is None:
        return (last_acknowledger(escalation.incident_id),)
    if escalation.repage_round:
        page = (
            Page.objects.filter(
                escalation=escalation,
                repage_round=escalation.repage_round,
                status=PageStatus.ACKNOWLEDGED,
            )
            .only("user_id")
            .first()
        )
        if page is not None:
            return (page.user_id,)
    return None


def last_acknowledger(incident_id: int) -> int | None:
    event = (
        TimelineEvent.objects.filter(
            incident_id=incident_id,
            kind=TimelineEventType.STATUS_CHANGED,
            payload__to=IS.ACKNOWLEDGED,
        )
        .order_by("-occurred_at", "-pk")
        .only("actor_id")
        .first()
    )
    return event.actor_id if event is not None else None


def escalation_on_ack(
    *, incident_id: int, actor_id: int | None = None, now: datetime | None = None
) -> Escalation | None:
    """The incident was acknowledged (or a page of a re-paging round was): stop paging,
    mark its open pages acknowledged and, when the policy says, arm the expiry. The
    pager's one-tap link calls this itself when the incident is already acknowledged
    (a re-page after an expired acknowledgement)."""
    with transaction.atomic():
        escalation = current_for_update(incident_id)
        if escalation is None or escalation.state not in (S.ACTIVE, S.EXHAUSTED):
            return escalation
        entries = Entries(escalation)
        acknowledge(escalation, actor_id, now or timezone.now(), entries)
        escalation.save()
        entries.record()
    return escalation


def paging_stop(*, incident_id: int, actor: User) -> Escalation | None:
    """A person stops a re-paging round from the console: the incident is acknowledged
    already (its acknowledgement expired without progress), so the incident's own
    Acknowledge button cannot; this counts as acknowledging one of the round's pages."""
    require(actor, incident_perms.ACKNOWLEDGE, gettext_lazy("acknowledge incidents"))
    if not Escalation.objects.filter(
        incident_id=incident_id, state__in=(S.ACTIVE, S.EXHAUSTED)
    ).exists():
        raise DomainError(
            gettext_noop("Nobody is being paged for incident #%(id)s."),
            code="invalid_state",
            params={"id": incident_id},
        )
    return escalation_on_ack(incident_id=incident_id, actor_id=actor.pk)


def acknowledge(
    escalation: Escalation, actor_id: int | None, now: datetime, entries: Entries
) -> None:
    escalation_move(escalation, S.ACKNOWLEDGED)
    escalation.next_due_at, escalation.ended_at = None, None
    escalation.acknowledged_at, escalation.acknowledged_by_id = now, actor_id
    escalation.ack_expires_at = ack_expiry(escalation, now)
    Page.objects.filter(
        escalation=escalation, status__in=(PageStatus.PENDING, PageStatus.DELIVERED)
    ).update(status=PageStatus.ACKNOWLEDGED, acknowledged_at=now)
    who = username_of(actor_id)
    acked = part("acknowledged", user=who) if who else part("acknowledged_nobody")
    parts = [acked, *expiry_parts(escalation.ack_expires_at)]
    entries.escalation_event("acknowledged", parts, actor=actor_id)


def escalation_stop(
    *, incident_id: int, reason: str, actor: User | None = None, now: datetime | None = None
) -> Escalation | None:
    """Stop paging for the incident (mitigated, resolved, or a person's decision): an
    escalation that is escalating or acknowledged ends, with `reason` (English) kept."""
    with transaction.atomic():
        escalation = current_for_update(incident_id)
        if escalation is None or escalation.state not in (S.ACTIVE, S.ACKNOWLEDGED):
            return escalation
        entries = Entries(escalation, actor=actor)
        stop(escalation, reason, now or timezone.now(), entries)
        escalation.save()
        entries.record()
    return escalation


def stop(escalation: Escalation, reason: str, now: datetime, entries: Entries) -> None:
    escalation_move(escalation, S.STOPPED)
    escalation.stop_reason, escalation.ended_at = reason[:200], now
    escalation.next_due_at = escalation.ack_expires_at = None
    stopped = part("stopped", reason=reason_parts(reason))
    entries.escalation_event("stopped", [stopped], reason=reason)


def current_for_update(incident_id: int) -> Escalation | None:
    return (
        Escalation.objects.select_for_update(of=("self",))
        .select_related("policy")
        .filter(incident_id=incident_id)
        .order_by("-episode")
        .first()
    )


def ack_expire(escalation_id: int, now: datetime) -> None:
    """An acknowledgement with no progress by its expiry pages again (a new round);
    one whose incident moved on meanwhile (its stop task lost) just stops."""
    with transaction.atomic():
        escalation = (
            Escalation.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("incident", "policy")
            .filter(pk=escalation_id, state=S.ACKNOWLEDGED, ack_expires_at__lte=now)
            .first()
        )
        if escalation is None:
            return
        entries = Entries(escalation)
        status = escalation.incident.status
        if status in STOP_REASONS:
            stop(escalation, STOP_REASONS[status], now, entries)
        else:
            minutes = escalation.policy.ack_timeout_minutes if escalation.policy else None
            new_round(escalation, now)
            escalation.ack_expires_at = None
            round_ = escalation.repage_round
            expired = (
                part("ack_expired", minutes=minutes, round=round_)
                if minutes
                else part("ack_expired_plain", round=round_)
            )
            message = [expired]
            entries.escalation_event("ack_expired", message, repage_round=escalation.repage_round)
        escalation.save()
        entries.record()
