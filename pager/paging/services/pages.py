"""Sending a page: its deliveries (one per contact method, planned with the page) are
tried in order until one goes out.

Each step is a short committed transaction around a call made outside any:

1. claim: with the page row locked, the next PENDING delivery becomes SENDING (attempts
   + 1, claimed_at) in one UPDATE, committed. Nothing is claimed when the page is no
   longer pending (acknowledged, delivered, failed) or its incident is mitigated or
   resolved (the rest are SKIPPED), or while another worker's claim is younger than
   PAGER_SEND_LEASE_SECONDS. An older claim is a worker that died mid-send: UNKNOWN (it
   may have gone out, so it is never sent again through that method) and on to the next.
2. send (pager/paging/send.py). A transient failure (a timeout, HTTP 5xx, 429) is tried
   once more through the same method after RETRY_BACKOFF_SECONDS.
3. record: SENT (the page is DELIVERED, the rest SKIPPED) or FAILED and the next method
   in the same run. Every method failed: the page is FAILED.

The timeline gets one entry per page outcome (delivered, failed through every method),
not one per attempt; the deliveries keep the attempts.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.urls import reverse
from django.utils import timezone

from console.texts import Msg
from incidents.models import IncidentStatus
from incidents.services.timeline import incident_event_record
from notifications.links import console_url
from pager import timeline_kinds
from pager.models import DeliveryState, Page, PageDelivery, PageStatus
from pager.paging.ack import ack_link
from pager.paging.channel import channel_send
from pager.paging.messages import PageText, page_text
from pager.paging.queue import pages_enqueue
from pager.paging.send import SendError, send
from pager.texts import (
    REMOVED_ERROR,
    UNKNOWN_ERROR,
    delivery_error,
    listed,
    method_words,
    pager_msg,
)

log = logging.getLogger(__name__)
D = DeliveryState
# One run sends for at most this long, then hands the page to a fresh task (the task's
# time limit, pager/tasks/paging.py, is well above it plus one delivery).
SEND_BUDGET_SECONDS = 240
REQUEUE_AFTER_SECONDS = 30  # a page still waiting this long was not taken by a worker
REQUEUE_BATCH = 500
# A timeline line holds at most 2000 characters: each service's error is cut to fit.
_ERROR_SHOWN = 150
_ENDED = (IncidentStatus.MITIGATED, IncidentStatus.RESOLVED)


def _backoff() -> float:
    return float(settings.PAGER_RETRY_BACKOFF_SECONDS)


def _lease() -> timedelta:
    return timedelta(seconds=settings.PAGER_SEND_LEASE_SECONDS)


@dataclass(frozen=True)
class Claim:
    delivery_id: int
    kind: str
    address: str
    claimed_at: datetime
    text: PageText
    channel_id: int | None = None  # a team's channel (pager/paging/channel.py)


# --- the entry point -------------------------------------------------------------------------
def page_send(*, page_id: int) -> None:
    """Send the page through its person's methods in order (the worker's task)."""
    started = time.monotonic()
    while (claim := _claim_next(page_id=page_id)) is not None:
        error = _attempt(page_id, claim)
        _record(page_id=page_id, claim=claim, error=error)
        if error is None:
            return
        if time.monotonic() - started > SEND_BUDGET_SECONDS:
            pages_enqueue([page_id])  # the rest in a fresh task, within its time limit
            return


def _attempt(page_id: int, claim: Claim) -> str | None:
    """Send; one more try after a transient failure. The error, or None when it went out."""
    ref = f"{page_id}.{claim.delivery_id}"
    try:
        _send(page_id, claim, ref)
        return None
    except SendError as exc:
        if not exc.transient:
            return str(exc)
        first = exc
    time.sleep(_backoff())
    if Page.objects.filter(pk=page_id, status=PageStatus.PENDING).exists():
        PageDelivery.objects.filter(
            pk=claim.delivery_id, state=D.SENDING, claimed_at=claim.claimed_at
        ).update(attempts=F("attempts") + 1)
        try:
            _send(page_id, claim, ref)
            return None
        except SendError as exc:
            return f"{exc} (tried twice)" if str(exc) == str(first) else f"{first} Then: {exc}"
    return f"{first} (not tried again: the page was answered meanwhile)"


def _send(page_id: int, claim: Claim, ref: str) -> None:
    if claim.channel_id is not None:
        channel_send(
            target_id=claim.channel_id,
            text=claim.text,
            page_id=page_id,
            delivery_id=claim.delivery_id,
        )
    else:
        send(claim.kind, claim.address, claim.text, ref=ref)


# --- claiming ---------------------------------------------------------------------------------
def _claim_next(*, page_id: int) -> Claim | None:
    now = timezone.now()
    with transaction.atomic():
        page = (
            Page.objects.select_for_update(of=("self",))
            .select_related("incident", "user", "channel")
            .filter(pk=page_id)
            .first()
        )
        if page is None or (page.user_id is None and page.channel_id is None):
            return None
        if page.status != PageStatus.PENDING or page.incident.status in _ENDED:
            _skip_rest(page)
            return None
        deliveries = list(page.deliveries.select_related("method").order_by("position"))
        for delivery in deliveries:
            if delivery.state != D.SENDING:
                continue
            if delivery.claimed_at is not None and delivery.claimed_at > now - _lease():
                return None  # another worker is sending through it now
            PageDelivery.objects.filter(
                pk=delivery.pk, state=D.SENDING, claimed_at=delivery.claimed_at
            ).update(state=D.UNKNOWN, error=UNKNOWN_ERROR)
            delivery.state = D.UNKNOWN
            log.warning("pager: page %s delivery %s: worker died mid-send", page_id, delivery.pk)
        for delivery in deliveries:
            if delivery.state != D.PENDING:
                continue
            method = delivery.method
            if page.user_id is None:  # a team's channel: its one delivery
                PageDelivery.objects.filter(pk=delivery.pk, state=D.PENDING).update(
                    state=D.SENDING, attempts=F("attempts") + 1, claimed_at=now
                )
                # Nobody to acknowledge as: the channel gets the incident's link.
                url = console_url() + reverse("incidents:detail", args=[page.incident_id])
                text = page_text(page, ack_url=url)
                return Claim(delivery.pk, delivery.kind, "", now, text, page.channel_id)
            if method is None or not method.enabled:
                PageDelivery.objects.filter(pk=delivery.pk, state=D.PENDING).update(
                    state=D.FAILED,
                    error=REMOVED_ERROR,
                )
                delivery.state = D.FAILED
                continue
            PageDelivery.objects.filter(pk=delivery.pk, state=D.PENDING).update(
                state=D.SENDING, attempts=F("attempts") + 1, claimed_at=now
            )
            text = page_text(page, ack_url=ack_link(page))
            return Claim(delivery.pk, delivery.kind, method.address, now, text)
        _fail_if_exhausted(page)
        return None


def _skip_rest(page: Page) -> None:
    PageDelivery.objects.filter(page=page, state=D.PENDING).update(state=D.SKIPPED)


# --- recording ---------------------------------------------------------------------------------
def _record(*, page_id: int, claim: Claim, error: str | None) -> None:
    now = timezone.now()
    with transaction.atomic():
        page = (
            Page.objects.select_for_update(of=("self",))
            .select_related("user", "channel")
            .get(pk=page_id)
        )
        if error is not None:
            PageDelivery.objects.filter(
                pk=claim.delivery_id, state=D.SENDING, claimed_at=claim.claimed_at
            ).update(state=D.FAILED, error=error[:500])
            _fail_if_exhausted(page)
            return
        # It went out, even if a requeue took the claim for a dead one meanwhile (UNKNOWN).
        PageDelivery.objects.filter(pk=claim.delivery_id, state__in=(D.SENDING, D.UNKNOWN)).update(
            state=D.SENT, sent_at=now, error=""
        )
        _skip_rest(page)
        if page.first_sent_at is None:
            page.first_sent_at = now
        if page.status != PageStatus.PENDING:  # acknowledged meanwhile: that is the outcome
            page.save(update_fields=["first_sent_at"])
            return
        page.status = PageStatus.DELIVERED
        page.save(update_fields=["status", "first_sent_at"])
        _delivered_event(page, claim)


def _delivered_event(page: Page, claim: Claim) -> None:
    before = list(
        page.deliveries.filter(state__in=(D.FAILED, D.UNKNOWN))
        .order_by("position")
        .values_list("kind", flat=True)
    )
    how, who = method_words(claim.kind), _who(page)
    if before:
        failed = listed([method_words(k) for k in before])
        line = pager_msg("page.delivered_after", who=who, how=how, failed=failed)
    else:
        line = pager_msg("page.delivered", who=who, how=how)
    # Late by the sending (a worker restarting, a re-queued or cut-off send), not only by
    # the escalation: said the way the escalation's "paged" entry says it (2 ticks).
    late = (page.first_sent_at - page.due_at).total_seconds() if page.first_sent_at else 0.0
    tick = float(settings.PAGER_TICK_SECONDS)
    if late > 2 * tick:
        line += pager_msg("page.sent_late", seconds=f"{late:.0f}")
    incident_event_record(
        incident_id=page.incident_id,
        kind=timeline_kinds.PAGE,
        message=line,
        payload={
            "page": page.pk,
            "event": "delivered",
            "user": who.english if isinstance(who, Msg) else who,
            "method": claim.kind,
            "failed_before": before,
            "sent_late_seconds": round(late, 1),
        },
        source="pager",
    )


def _fail_if_exhausted(page: Page) -> None:
    """Nothing left to try and nothing went out: the page FAILED, once, on the timeline."""
    if page.status != PageStatus.PENDING:
        return
    rows = list(page.deliveries.order_by("position").values_list("kind", "state", "error"))
    if any(state in (D.PENDING, D.SENDING, D.SENT) for _kind, state, _error in rows):
        return
    Page.objects.filter(pk=page.pk, status=PageStatus.PENDING).update(status=PageStatus.FAILED)
    page.status = PageStatus.FAILED
    who = _who(page)
    if rows:
        reasons = [
            pager_msg(
                "page.reason",
                method=method_words(k),
                error=delivery_error(e[:_ERROR_SHOWN]) if e else pager_msg(f"state.{s}"),
            )
            for k, s, e in rows
        ]
        message = pager_msg("page.failed_every", who=who, reasons=listed(reasons, "list.semicolon"))
    else:
        message = pager_msg("page.failed_no_method", who=who)
    incident_event_record(
        incident_id=page.incident_id,
        kind=timeline_kinds.PAGE,
        message=message,
        payload={
            "page": page.pk,
            "event": "failed",
            "user": who.english if isinstance(who, Msg) else who,
            "errors": [{"method": k, "state": s, "error": e} for k, s, e in rows],
        },
        source="pager",
    )


def _who(page: Page) -> Msg | str:
    if page.user is not None:
        return page.user.get_username()
    if page.channel is not None:
        return pager_msg("page.who_channel", channel=page.channel.name)
    return pager_msg("page.who_nobody")


# --- beat ---------------------------------------------------------------------------------------
def pages_requeue() -> int:
    """Beat: queue again the pages no worker took (the broker was down when they were
    made) and those whose worker died mid-send (a claim past its lease). Returns how
    many were handed to the broker's queue."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=REQUEUE_AFTER_SECONDS)
    deliveries = PageDelivery.objects.filter(page=OuterRef("pk"))
    ids = list(
        Page.objects.filter(status=PageStatus.PENDING, created_at__lt=cutoff)
        .filter(Q(user__isnull=False) | Q(channel__isnull=False))
        .filter(
            Q(Exists(deliveries.filter(state=D.PENDING)))
            | Q(Exists(deliveries.filter(state=D.SENDING, claimed_at__lt=now - _lease())))
            | ~Q(Exists(deliveries))
        )
        .exclude(Exists(deliveries.filter(state=D.SENDING, claimed_at__gte=now - _lease())))
        .order_by("pk")
        .values_list("pk", flat=True)[:REQUEUE_BATCH]
    )
    if ids:
        pages_enqueue(ids)
    return len(ids)
