"""Which incidents auto-triage still has to evaluate, and the task that evaluates them.

An opening (or reopening, or another runbook) adds the incident to AutoTriageDue and wakes
one drain task; the drain claims what is due in batches and evaluates each batch with a
constant number of queries (runbooks/auto_triage/evaluation.py). In a storm that opens hundreds of
incidents a minute this is a few tasks instead of one each, and an incident asked for
twice before its turn is evaluated once.

Wake-ups: with a cache every process shares (Redis, as production runs), one drain is
awake at a time: a request wakes one only if none is already queued (a cache key the drain
clears as it starts, before it claims, so an incident added later always meets a drain
that has yet to claim). A per-process cache (make run, the tests) cannot tell, so there
every request wakes a drain; one that finds nothing due ends at once.

A claim deletes the rows before evaluating (no lock is held while Prometheus is asked);
a worker lost mid-batch loses that batch's evaluations until the beat's sweep, which
re-queues the newest open incidents every minute.

Incidents never imports this app: it hears of openings through incidents'
`timeline_appended` signal (connected in RunbooksConfig.ready()).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from incidents.models import OPEN_STATUSES, Incident, TimelineEvent, TimelineEventType
from runbooks.auto_triage.evaluation import auto_triage_last, auto_triage_run_many, is_news
from runbooks.auto_triage.models import AutoTriageDue
from runbooks.triage import TriageResult

DRAIN_TASK = "runbooks.tasks.auto_triage_drain"
BATCH = 25  # incidents per claim: one batch's queries and one INSERT
DRAIN_BUDGET_S = 20.0  # then hand over to another drain (the task's soft limit is 50 s)
WAKE_KEY = "runbooks:auto-triage:drain-queued"
WAKE_SECONDS = 60  # a wake-up lost with the broker is tried again after this long at most
# A drain starts this long after it is woken, so a burst's openings meet in one batch (on
# 2 CPUs a worker that drains at once keeps up one incident at a time, paying a task's
# fixed costs for each); no one reads a triage entry within a second of an opening.
WAKE_DELAY_S = 1.0
SWEEP_MAX = 50  # open incidents re-evaluated per beat run, newest first
REQUEUE_SECONDS = 30  # a poll that sees a new branch asks once in this long
# What opening an incident looks like on the timeline (kind, and status_changed's verb).
_OPENING_VERBS = ("reopened",)
_PER_PROCESS_CACHES = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
)


def auto_triage_request(*, incident_ids: Iterable[int]) -> None:
    """Ask a worker to evaluate these incidents, when the current transaction commits."""
    ids = sorted(set(incident_ids))
    if ids:
        # robust: with the broker down the caller (a webhook, a page poll) goes on; the
        # rows stay due and the next wake-up or sweep evaluates them.
        transaction.on_commit(lambda: _enqueue(ids), robust=True)


def _enqueue(incident_ids: list[int]) -> None:
    AutoTriageDue.objects.bulk_create(
        [AutoTriageDue(incident_id=pk) for pk in incident_ids], ignore_conflicts=True
    )
    _wake()


def _shared_cache() -> bool:
    return settings.CACHES["default"]["BACKEND"] not in _PER_PROCESS_CACHES


def _wake() -> None:
    if _shared_cache() and not cache.add(WAKE_KEY, 1, WAKE_SECONDS):
        return  # a drain is queued and has not claimed yet: it will see these rows
    # By name: runbooks/tasks.py wraps this module's drain, so this module cannot import
    # it; RunbooksConfig.ready() imports it, so every process has it registered.
    drain = current_app.tasks[DRAIN_TASK]
    try:
        # No publish retries: with the broker down the caller should not wait.
        drain.apply_async(countdown=WAKE_DELAY_S, retry=False)
    except Exception:
        cache.delete(WAKE_KEY)  # nothing is queued after all: let the next request try
        raise


@transaction.atomic
def _claim(n: int) -> list[int]:
    """Take up to `n` due incidents, oldest request first; two drains never share one."""
    qs = AutoTriageDue.objects.select_for_update(skip_locked=True)
    ids = list(qs.order_by("requested_at", "incident_id").values_list("incident_id", flat=True)[:n])
    if ids:
        AutoTriageDue.objects.filter(incident_id__in=ids).delete()
    return ids


def auto_triage_drain() -> int:
    """Evaluate what is due, a batch at a time, for up to DRAIN_BUDGET_S; then wake another
    drain for what is left. Returns the number of entries posted."""
    cache.delete(WAKE_KEY)  # before claiming: see the module's docstring
    deadline = time.monotonic() + DRAIN_BUDGET_S
    posted = 0
    while time.monotonic() < deadline:
        ids = _claim(BATCH)
        if not ids:
            return posted
        events, left = auto_triage_run_many(incident_ids=ids, deadline=deadline)
        posted += len(events)
        if left:
            _enqueue(left)  # wakes the next drain
            return posted
    _wake()
    return posted


def auto_triage_sweep() -> int:
    """Queue an evaluation of the SWEEP_MAX most recent open incidents (beat)."""
    ids = list(
        Incident.objects.filter(status__in=OPEN_STATUSES)
        .order_by("-triggered_at", "-id")
        .values_list("pk", flat=True)[:SWEEP_MAX]
    )
    auto_triage_request(incident_ids=ids)
    return len(ids)


def auto_triage_seen(*, incident: Incident, result: TriageResult) -> TimelineEvent | None:
    """For the triage page's poll and the triage API, which just evaluated `result`: the
    last auto-triage entry (shown as the stored result), and a re-evaluation queued when
    `result` is news to the timeline (once per REQUEUE_SECONDS, however many poll)."""
    last = auto_triage_last(incident_id=incident.pk)
    if (
        incident.is_open
        and is_news(result, last)
        and cache.add(f"auto-triage-requested:{incident.pk}", 1, REQUEUE_SECONDS)
    ):
        auto_triage_request(incident_ids=[incident.pk])
    return last


def _opens(event: TimelineEvent) -> bool:
    if event.kind in (TimelineEventType.INCIDENT_OPENED, TimelineEventType.RUNBOOK_CHANGED):
        return True
    payload = event.payload or {}
    return event.kind == TimelineEventType.STATUS_CHANGED and payload.get("verb") in _OPENING_VERBS


def on_timeline_appended(sender: object, events: list[TimelineEvent], **kwargs: object) -> None:
    """`timeline_appended` receiver (after the commit): an incident opened, reopened or got
    another runbook, so its triage is evaluated now rather than at the next sweep."""
    auto_triage_request(incident_ids=[e.incident_id for e in events if _opens(e)])
