"""Thin Celery tasks for the actions and auto-triage: take primary keys, call one service."""

from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from actions import execution

# The drill tasks live in drills/tasks.py; Celery looks for tasks in <app>.tasks.
from actions.guard import services as guard_services
from drills.tasks import (  # noqa: F401
    drill_run_finish,
    drill_run_inject,
    drill_runs_watch,
)
from runbooks.auto_triage import evaluation as auto_triage
from runbooks.auto_triage import queue as auto_triage_queue

# Below the run's lease (ACTIONS_LEASE_SECONDS), so a live task is never taken for dead.
TIME_LIMIT = settings.ACTIONS_TASK_TIME_LIMIT


@shared_task(
    name="runbooks.tasks.action_run_execute",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=TIME_LIMIT - 10,
    time_limit=TIME_LIMIT,
)
def action_run_execute_task(run_id: int) -> None:
    # Redelivery is expected (acks_late): the claim inside finds a finished run and does
    # nothing, or a run whose worker died and finishes it without writing twice.
    execution.action_run_execute(run_id=run_id)


# Each task sets its soft limit below its hard one: the global soft limit (240 s) above a
# task's hard limit makes Celery refuse to send it at all.
@shared_task(
    name="runbooks.tasks.action_runs_recover", acks_late=True, soft_time_limit=50, time_limit=60
)
def action_runs_recover() -> int:
    return execution.action_runs_recover()


@shared_task(
    name="runbooks.tasks.config_revisions_capture",
    acks_late=True,
    soft_time_limit=50,
    time_limit=60,
)
def config_revisions_capture() -> int:
    return execution.config_revisions_capture_now(guard=True)


@shared_task(
    name="runbooks.tasks.guard_watch_evaluate",
    acks_late=True,
    soft_time_limit=50,
    time_limit=60,
)
def guard_watch_evaluate_task(watch_id: int) -> None:
    # One evaluation of a guarded change; it schedules the next itself while watching.
    guard_services.guard_watch_evaluate(watch_id=watch_id)


@shared_task(
    name="runbooks.tasks.guard_watches_recover", acks_late=True, soft_time_limit=50, time_limit=60
)
def guard_watches_recover() -> int:
    return guard_services.guard_watches_recover()


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


@shared_task(name="runbooks.tasks.auto_triage_drain", **_TRIAGE_TASK)
def auto_triage_drain() -> int:
    # What is due, in batches (runbooks/auto_triage/queue.py); a redelivery finds the
    # rows it already claimed gone and posts nothing twice.
    return auto_triage_queue.auto_triage_drain()


@shared_task(
    name="runbooks.tasks.auto_triage_sweep", acks_late=True, soft_time_limit=50, time_limit=60
)
def auto_triage_sweep() -> int:
    return auto_triage_queue.auto_triage_sweep()
