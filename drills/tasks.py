"""Thin Celery tasks for drills, on the default queue: take primary keys, call one
worker-side service (drills/execution.py)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from drills import execution

_SHORT: dict[str, Any] = {"acks_late": True, "soft_time_limit": 50, "time_limit": 60}


@shared_task(name="drills.tasks.drill_run_inject", **_SHORT)
def drill_run_inject(run_id: int) -> None:
    execution.drill_run_inject(run_id=run_id)


@shared_task(name="drills.tasks.drill_run_finish", **_SHORT)
def drill_run_finish(run_id: int) -> None:
    execution.drill_run_finish(run_id=run_id)


@shared_task(name="drills.tasks.drill_runs_watch", **_SHORT)
def drill_runs_watch() -> int:
    return execution.drill_runs_watch()


# --- names used before 2026-12 (issue 24) ---------------------------------------------
# These tasks were runbooks.tasks.*: a message queued before the upgrade still carries
# the old name. Each old name runs the task above with the same options. Remove in the
# release after 2026-12.
@shared_task(name="runbooks.tasks.drill_run_inject", **_SHORT)
def drill_run_inject_before_2026_12(run_id: int) -> None:
    drill_run_inject(run_id)


@shared_task(name="runbooks.tasks.drill_run_finish", **_SHORT)
def drill_run_finish_before_2026_12(run_id: int) -> None:
    drill_run_finish(run_id)


@shared_task(name="runbooks.tasks.drill_runs_watch", **_SHORT)
def drill_runs_watch_before_2026_12() -> int:
    return drill_runs_watch()
