"""Thin Celery tasks for action runs and guarded changes: take primary keys, call one
worker-side service. Their names are in actions/dispatch.py, which the services queue
them by."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

from actions import capture, dispatch, execution
from actions.guard import services as guard_services

# Below the run's lease (ACTIONS_LEASE_SECONDS), so a live task is never taken for dead.
TIME_LIMIT = settings.ACTIONS_TASK_TIME_LIMIT
_EXECUTE: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "soft_time_limit": TIME_LIMIT - 10,
    "time_limit": TIME_LIMIT,
}
# Each task sets its soft limit below its hard one: the global soft limit (240 s) above a
# task's hard limit makes Celery refuse to send it at all.
_SHORT: dict[str, Any] = {"acks_late": True, "soft_time_limit": 50, "time_limit": 60}


@shared_task(name=dispatch.ACTION_RUN_EXECUTE, **_EXECUTE)
def action_run_execute(run_id: int) -> None:
    # Redelivery is expected (acks_late): the claim inside finds a finished run and does
    # nothing, or a run whose worker died and finishes it without writing twice.
    execution.action_run_execute(run_id=run_id)


@shared_task(name=dispatch.ACTION_RUNS_RECOVER, **_SHORT)
def action_runs_recover() -> int:
    return execution.action_runs_recover()


@shared_task(name=dispatch.CONFIG_REVISIONS_CAPTURE, **_SHORT)
def config_revisions_capture() -> int:
    return capture.config_revisions_capture_now(guard=True)


@shared_task(name=dispatch.GUARD_WATCH_EVALUATE, **_SHORT)
def guard_watch_evaluate(watch_id: int) -> None:
    # One evaluation of a guarded change; it schedules the next itself while watching.
    guard_services.guard_watch_evaluate(watch_id=watch_id)


@shared_task(name=dispatch.GUARD_WATCHES_RECOVER, **_SHORT)
def guard_watches_recover() -> int:
    return guard_services.guard_watches_recover()


# --- names used before 2026-12 (issue 24) ---------------------------------------------
# These tasks were runbooks.tasks.*: a message queued before the upgrade (a run's
# execution, a guard's next evaluation) still carries the old name. Each old name runs the
# task above with the same options. Remove in the release after 2026-12.
@shared_task(name="runbooks.tasks.action_run_execute", **_EXECUTE)
def action_run_execute_before_2026_12(run_id: int) -> None:
    action_run_execute(run_id)


@shared_task(name="runbooks.tasks.action_runs_recover", **_SHORT)
def action_runs_recover_before_2026_12() -> int:
    return action_runs_recover()


@shared_task(name="runbooks.tasks.config_revisions_capture", **_SHORT)
def config_revisions_capture_before_2026_12() -> int:
    return config_revisions_capture()


@shared_task(name="runbooks.tasks.guard_watch_evaluate", **_SHORT)
def guard_watch_evaluate_before_2026_12(watch_id: int) -> None:
    guard_watch_evaluate(watch_id)


@shared_task(name="runbooks.tasks.guard_watches_recover", **_SHORT)
def guard_watches_recover_before_2026_12() -> int:
    return guard_watches_recover()
