"""Thin Celery tasks for drills (registered through runbooks/tasks.py), on the default
queue: take primary keys, call one worker-side service."""

from celery import shared_task

from drills import execution


@shared_task(
    name="runbooks.tasks.drill_run_inject", acks_late=True, soft_time_limit=50, time_limit=60
)
def drill_run_inject(run_id: int) -> None:
    execution.drill_run_inject(run_id=run_id)


@shared_task(
    name="runbooks.tasks.drill_run_finish", acks_late=True, soft_time_limit=50, time_limit=60
)
def drill_run_finish(run_id: int) -> None:
    execution.drill_run_finish(run_id=run_id)


@shared_task(
    name="runbooks.tasks.drill_runs_watch", acks_late=True, soft_time_limit=50, time_limit=60
)
def drill_runs_watch() -> int:
    return execution.drill_runs_watch()
