"""Deliveries: recorded from timeline events (and from overdue action items, by
overdue.py), handed to the worker, sent, retried and given up.

Recording happens after the writer's transaction has committed (incidents sends
`timeline_appended` then), so nothing here can fail or slow down the write that caused
it beyond a few queries; sending happens on the worker.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Case, F, JSONField, Prefetch, Q, Value, When
from django.utils import timezone

from console.errors import DomainError, NotFound
from console.permissions import require
from console.texts import Msg, msg
from incidents.models import Incident, TimelineEvent
from notifications import transports
from notifications.events import Notice, notice_for
from notifications.links import console_url
from notifications.messages import message_build, summary_texts
from notifications.models import Delivery, DeliveryStatus, Event, Rule, Target
from notifications.permissions import RETRY
from notifications.services.errors import ERROR_MAX, error_english, error_texts
from postmortems.models import Postmortem

log = logging.getLogger(__name__)
S = DeliveryStatus
# A postmortem event just after the postmortem's move to review is the request itself
# (both are written in one transaction); the round's key makes any other event of the
# round (an approval a minute later) the same notification, sent once.
REVIEW_ROUND_SLACK = timedelta(minutes=1)
REQUEUE_BATCH = 500


# --- recording ---------------------------------------------------------------------------
def timeline_events_notify(*, events: Iterable[TimelineEvent]) -> int:
    """The `timeline_appended` receiver: record a delivery per matching rule's target
    for each event worth telling, and queue them. Returns how many were queued."""
    notices = [notice for event in events if (notice := notice_for(event)) is not None]
    if not notices:
        return 0
    return deliveries_enqueue(delivery_ids=deliveries_record(notices=_review_rounds(notices)))


def _review_rounds(notices: list[Notice]) -> list[Notice]:
    """Keep a postmortem notice only when it requested a review; key it by the round."""
    wanted = {n.details["postmortem"] for n in notices if n.event == Event.POSTMORTEM_IN_REVIEW}
    if not wanted:
        return notices
    found = Postmortem.objects.filter(pk__in=wanted).only("review_requested_at", "title")
    postmortems = {pm.pk: pm for pm in found}
    kept = []
    for notice in notices:
        if notice.event != Event.POSTMORTEM_IN_REVIEW:
            kept.append(notice)
            continue
        pm = postmortems.get(notice.details["postmortem"])
        asked = pm.review_requested_at if pm is not None else None
        if (
            pm is None
            or asked is None
            or not timedelta(0) <= notice.occurred_at - asked <= REVIEW_ROUND_SLACK
        ):
            continue
        key = f"review:{pm.pk}:{asked.isoformat()}"
        kept.append(replace(notice, key=key, details={**notice.details, "title": pm.title}))
    return kept


def deliveries_record(*, notices: list[Notice]) -> list[int]:
    """One delivery per (target, notice) that an enabled rule matches; a pair recorded
    before (the same event found again) is left as it is. Returns the ids waiting to be
    queued. A fixed number of queries, however many notices."""
    rules = list(
        Rule.objects.filter(enabled=True).prefetch_related(
            Prefetch("targets", queryset=Target.objects.filter(enabled=True))
        )
    )
    if not rules or not notices:
        return []
    incidents = Incident.objects.select_related("commander").in_bulk(
        {n.incident_id for n in notices}
    )
    actor_ids = {n.actor_id for n in notices if n.actor_id is not None}
    actors = dict(
        get_user_model().objects.filter(pk__in=actor_ids).values_list("pk", "username")
        if actor_ids
        else []
    )
    now = timezone.now()
    base_url = console_url()  # once, however many messages
    rows: dict[tuple[int, str], Delivery] = {}
    for notice in notices:
        incident = incidents.get(notice.incident_id)
        if incident is None:
            continue
        built: dict[str, tuple[str, dict[str, Any]]] = {}  # per language: targets may differ
        for rule in rules:
            if not rule.matches(
                event=notice.event,
                severity=incident.severity,
                namespace=incident.namespace,
                is_drill=incident.is_drill,
            ):
                continue
            for target in rule.targets.all():
                if (target.pk, notice.key) in rows:
                    continue
                actor = actors.get(notice.actor_id) if notice.actor_id else None
                if target.language not in built:
                    built[target.language] = message_build(
                        notice, incident, actor=actor, language=target.language, base_url=base_url
                    )
                summary, body = built[target.language]
                rows[(target.pk, notice.key)] = Delivery(
                    target=target,
                    rule=rule,
                    event=notice.event,
                    event_key=notice.key,
                    incident=incident,
                    summary=summary,
                    body=body,
                    texts=summary_texts(body),
                    created_at=now,
                )
    if not rows:
        return []
    # ignore_conflicts: an overdue item found again, or a twin event recorded by a
    # concurrent process, keeps its first delivery (unique target + event_key).
    Delivery.objects.bulk_create(rows.values(), ignore_conflicts=True)
    return list(
        Delivery.objects.filter(
            target_id__in={t for t, _ in rows},
            event_key__in={k for _, k in rows},
            status=S.PENDING,
        ).values_list("pk", flat=True)
    )


def delivery_test(*, target_id: int, actor: User) -> Delivery:
    """A test message to one target (the admin's "Send a test notification")."""
    target = Target.objects.filter(pk=target_id).first()
    if target is None:
        raise NotFound(f"Target #{target_id} does not exist.")
    notice = Notice(
        event=Event.TEST, key=f"test:{uuid.uuid4().hex}", incident_id=0, occurred_at=timezone.now()
    )
    summary, body = message_build(
        notice, None, actor=actor.get_username(), language=target.language
    )
    with transaction.atomic():
        delivery = Delivery.objects.create(
            target=target, event=Event.TEST, event_key=notice.key, summary=summary, body=body,
            texts=summary_texts(body), created_at=notice.occurred_at,
        )  # fmt: skip
        transaction.on_commit(lambda: deliveries_enqueue(delivery_ids=[delivery.pk]))
    return delivery


# --- queueing ----------------------------------------------------------------------------
def deliveries_enqueue(*, delivery_ids: list[int]) -> int:
    """Hand deliveries to the worker. A broker that does not answer is recorded on the
    deliveries, which stay "not queued yet" until deliveries_requeue (beat) succeeds;
    it never fails the caller (often the webhook that has just opened an incident)."""
    # cycle: notifications/tasks.py imports these services (its tasks call them, and the
    # send task's time limits are read from here).
    from notifications.tasks import delivery_send_task

    queued: list[int] = []
    for pk in delivery_ids:
        try:
            # retry=False: fail at once instead of holding the caller in kombu's retries.
            delivery_send_task.apply_async((pk,), retry=False)
        except Exception as exc:  # kombu and redis raise several types for a broker that is down
            log.warning("notifications: could not queue deliveries %s: %s", delivery_ids, exc)
            said = msg("notifications.error.not_queued", detail=str(exc), broker=_broker())
            _not_queued(set(delivery_ids) - set(queued), said)
            break
        queued.append(pk)
    if queued:
        Delivery.objects.filter(pk__in=queued, status=S.PENDING).update(
            status=S.QUEUED, last_error="", updated_at=timezone.now()
        )
    return len(queued)


def _not_queued(ids: set[int], said: Msg) -> None:
    """Say why on the rows still waiting: each row's texts keep its own summary, so they
    are merged row by row, in one conditional UPDATE (a row queued meanwhile is left)."""
    texts = dict(Delivery.objects.filter(pk__in=ids, status=S.PENDING).values_list("pk", "texts"))
    if not texts:
        return
    merged = [
        When(pk=pk, then=Value(error_texts(old, said), output_field=JSONField()))
        for pk, old in texts.items()
    ]
    Delivery.objects.filter(pk__in=texts, status=S.PENDING).update(
        last_error=error_english(said),
        texts=Case(*merged, default=F("texts"), output_field=JSONField()),
        updated_at=timezone.now(),
    )


def _broker() -> str:
    url = str(settings.CELERY_BROKER_URL)
    return url.split("@", 1)[-1] if "@" in url else url  # never a password


def deliveries_requeue() -> int:
    """Beat: queue again the deliveries a broker outage left "not queued yet", and those
    a worker stopped sending (killed mid-call) once their claim has run out."""
    now = timezone.now()
    dropped = list(
        Delivery.objects.filter(_sending(), last_attempt_at__lt=now - SEND_LEASE)
        .order_by("pk")
        .values_list("pk", flat=True)[:REQUEUE_BATCH]
    )
    if dropped:
        log.warning("notifications: a worker stopped while sending %s; sending again", dropped)
        # Conditional like the claim: a row a late worker recorded meanwhile is left alone.
        Delivery.objects.filter(
            _sending(), pk__in=dropped, last_attempt_at__lt=now - SEND_LEASE
        ).update(status=S.PENDING, updated_at=now)
    cutoff = now - timedelta(seconds=settings.NOTIFY_REQUEUE_AFTER_SECONDS)
    ids = list(
        Delivery.objects.filter(Q(updated_at__lt=cutoff) | Q(pk__in=dropped), status=S.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)[:REQUEUE_BATCH]
    )
    return deliveries_enqueue(delivery_ids=ids) if ids else 0


@transaction.atomic
def delivery_retry(*, delivery_id: int, actor: User) -> Delivery:
    """Send a failed delivery again (after its target was fixed)."""
    require(actor, RETRY, "send notifications again")
    delivery = Delivery.objects.select_for_update().filter(pk=delivery_id).first()
    if delivery is None:
        raise NotFound(f"Delivery #{delivery_id} does not exist.")
    if delivery.status != S.FAILED:
        raise DomainError(
            f"Delivery #{delivery_id} is {delivery.get_status_display().lower()}; only a "
            "failed one is sent again.",
            code="invalid_state",
        )
    delivery.status = S.PENDING
    delivery.save(update_fields=["status", "updated_at"])
    transaction.on_commit(lambda: deliveries_enqueue(delivery_ids=[delivery_id]))
    return delivery


# --- sending (on the worker) -------------------------------------------------------------
# The task's hard time limit (notifications/tasks.py): an attempt cannot outlive it.
SEND_TIME_LIMIT_SECONDS = 90
# A claim older than this belongs to a worker that died mid-send (killed, lost): the
# attempt counts, and deliveries_requeue or a redelivered message may take the row over.
SEND_LEASE = timedelta(seconds=SEND_TIME_LIMIT_SECONDS + 30)
_OPEN = (S.PENDING, S.QUEUED, S.RETRYING)


def _sending() -> Q:
    """Rows claimed by an attempt still under way. The claim writes last_attempt_at and
    updated_at with the same instant; any later write (the outcome, a requeue) moves
    updated_at past it. No extra column or status for it."""
    return Q(status__in=_OPEN, last_attempt_at__isnull=False, updated_at=F("last_attempt_at"))


def delivery_send(*, delivery_id: int, last_try: bool) -> None:
    """One attempt, with no transaction open while the target is called (a slow target
    held the database's write lock for a minute on SQLite, and worker slots on
    PostgreSQL): claim the row and count the attempt (committed), send, then record the
    outcome. A second copy of the message finds the row claimed and leaves it. Raises
    DeliveryError (after recording the attempt) when a later attempt may succeed and
    this is not the last one; the task retries with backoff."""
    delivery = _delivery_claim(delivery_id=delivery_id)
    if delivery is None:
        return
    claimed_at = delivery.last_attempt_at
    assert claimed_at is not None  # the claim set it
    status, said, sent_at = S.SENT, None, None
    retry_with: transports.DeliveryError | None = None
    try:
        transports.deliver(delivery.target, delivery.body, delivery_id=delivery.pk)
    except transports.DeliveryError as exc:
        said = exc.said or msg("notifications.error.text", text=str(exc))
        if exc.retry and not last_try:
            status, retry_with = S.RETRYING, exc
        else:
            status = S.FAILED
            if exc.retry:
                said += msg("notifications.error.gave_up", count=delivery.attempts)
    else:
        sent_at = timezone.now()
    # Only while the claim is still ours: a row taken over after the lease keeps the
    # newer attempt's state.
    recorded = Delivery.objects.filter(
        pk=delivery_id, last_attempt_at=claimed_at, updated_at=claimed_at
    ).update(
        status=status,
        last_error=error_english(said) if said is not None else "",
        texts=error_texts(delivery.texts, said),
        sent_at=sent_at,
        updated_at=_after(claimed_at),
    )
    if recorded and retry_with is not None:
        raise retry_with  # after the commit, so the attempt and its error stay recorded


def _after(moment: datetime) -> datetime:
    """Now, strictly later than the claim (so the row no longer reads as being sent)."""
    now = timezone.now()
    return now if now > moment else moment + timedelta(microseconds=1)


def _delivery_claim(*, delivery_id: int) -> Delivery | None:
    """Take the row for one attempt: count it and stamp it in one conditional UPDATE,
    committed before anything is sent (a lost send still shows its attempt). None when
    there is nothing to send: gone, finished, being sent by another copy, or its target
    disabled (recorded as failed)."""
    now = timezone.now()
    claimable = Q(status__in=_OPEN) & (~_sending() | Q(last_attempt_at__lt=now - SEND_LEASE))
    delivery = Delivery.objects.select_related("target").filter(pk=delivery_id).first()
    if delivery is None or delivery.status in (S.SENT, S.FAILED):
        return None
    with transaction.atomic():
        if not delivery.target.enabled:
            said = msg("notifications.error.target_disabled")
            Delivery.objects.filter(claimable, pk=delivery_id).update(
                status=S.FAILED,
                last_error=error_english(said),
                texts=error_texts(delivery.texts, said),
                last_attempt_at=now,
                updated_at=_after(now),
            )
            return None
        claimed = Delivery.objects.filter(claimable, pk=delivery_id).update(
            # A row still "not queued yet" is on the worker now: the enqueuer's flip
            # (PENDING only) must not touch it mid-send.
            status=Case(When(status=S.PENDING, then=Value(S.QUEUED)), default=F("status")),
            attempts=F("attempts") + 1,
            last_attempt_at=now,
            updated_at=now,
        )
    if not claimed:
        return None
    delivery.refresh_from_db(fields=["status", "attempts", "last_attempt_at", "updated_at"])
    return delivery


def delivery_fail(*, delivery_id: int, error: str | Msg | BaseException) -> None:
    """The task died outside the transports (a time limit, a bug): the row says so. An
    exception is worded "The worker failed: <its repr>"; a string is shown as written."""
    if isinstance(error, BaseException):
        said = msg("notifications.error.worker_failed", detail=repr(error))
    elif isinstance(error, Msg):
        said = error
    else:
        said = msg("notifications.error.text", text=error[:ERROR_MAX])
    rows = Delivery.objects.filter(pk=delivery_id).exclude(status=S.SENT)
    old = rows.values_list("texts", flat=True).first()
    rows.update(
        status=S.FAILED,
        last_error=error_english(said),
        texts=error_texts(old, said),
        updated_at=timezone.now(),
    )
