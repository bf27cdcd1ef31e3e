"""Thin Celery tasks for auto-triage: take primary keys, call one service. (Action runs'
and drills' tasks are actions/tasks.py and drills/tasks.py.)"""

from typing import Any

from celery import shared_task
from django.db import OperationalError

from runbooks.auto_triage import evaluation as auto_triage
from runbooks.auto_triage import queue as auto_triage_queue

# Auto-triage's tasks: idempotent, so late acks and retries of a lost database are safe.
_TRIAGE_TASK: dict[str, Any] = {
    "acks_late": True,
    "soft_time_limit": 50,
    "time_limit": 60,
    "autoretry_for": (OperationalError,),
    "max_retries": 3,
    "retry_backoff": True,
    "retry_jitter": True,
}


@shared_task(name="runbooks.tasks.auto_triage_evaluate", **_TRIAGE_TASK)
def auto_triage_evaluate(incident_id: int) -> bool:
    # One incident: what releases before the drain queued (a message may still be in a
    # queue across an upgrade). Idempotent: an evaluation that is no news posts nothing.
    return auto_triage.auto_triage_run(incident_id=incident_id) is not None


@shared_task(name=auto_triage_queue.DRAIN_TASK, **_TRIAGE_TASK)
def auto_triage_drain() -> int:
    # What is due, in batches (runbooks/auto_triage/queue.py); a redelivery finds the
    # rows it already claimed gone and posts nothing twice.
    return auto_triage_queue.auto_triage_drain()


@shared_task(
    name="runbooks.tasks.auto_triage_sweep", acks_late=True, soft_time_limit=50, time_limit=60
)
def auto_triage_sweep() -> int:
    return auto_triage_queue.auto_triage_sweep()
