"""The actions app's tasks, queued by name.

actions/tasks.py imports the services that queue its tasks (the run and guard services,
the worker's execution), so those cannot import it back: they send a task by its name,
which is what `.delay()` sends too. Routes are by name (config/celery_routes.py), so the
message lands on the queue it always did; the task's own options (late acks, time
limits) are the worker's, read from the task it registered under that name.
"""

from __future__ import annotations

from celery import current_app

ACTION_RUN_EXECUTE = "actions.tasks.action_run_execute"
ACTION_RUNS_RECOVER = "actions.tasks.action_runs_recover"
CONFIG_REVISIONS_CAPTURE = "actions.tasks.config_revisions_capture"
GUARD_WATCH_EVALUATE = "actions.tasks.guard_watch_evaluate"
GUARD_WATCHES_RECOVER = "actions.tasks.guard_watches_recover"


def task_send(name: str, *args: int, countdown: int | None = None) -> None:
    """Queue task `name` with `args` (primary keys), after `countdown` seconds if given."""
    current_app.send_task(name, args=args, countdown=countdown)
