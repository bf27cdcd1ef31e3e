"""The tasks that moved out of runbooks (issue 24: actions/tasks.py, drills/tasks.py) keep
their old names for one release: a message queued before the upgrade still finds a task,
with the same options and route, that runs the new one."""

import pytest

from config.celery import app
from config.celery_routes import TASK_ROUTES

# old name -> (new name, the arguments its messages carry)
MOVED = {
    "runbooks.tasks.action_run_execute": ("actions.tasks.action_run_execute", (1,)),
    "runbooks.tasks.action_runs_recover": ("actions.tasks.action_runs_recover", ()),
    "runbooks.tasks.config_revisions_capture": ("actions.tasks.config_revisions_capture", ()),
    "runbooks.tasks.guard_watch_evaluate": ("actions.tasks.guard_watch_evaluate", (1,)),
    "runbooks.tasks.guard_watches_recover": ("actions.tasks.guard_watches_recover", ()),
    "runbooks.tasks.drill_run_inject": ("drills.tasks.drill_run_inject", (1,)),
    "runbooks.tasks.drill_run_finish": ("drills.tasks.drill_run_finish", (1,)),
    "runbooks.tasks.drill_runs_watch": ("drills.tasks.drill_runs_watch", ()),
}
OPTIONS = ("acks_late", "reject_on_worker_lost", "soft_time_limit", "time_limit", "max_retries")


@pytest.fixture(scope="module")
def registry():
    app.loader.import_default_modules()  # what a worker imports at start
    return app.tasks


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_name_still_resolves_as_its_new_task(registry, old):
    new, _ = MOVED[old]
    assert old in registry, f"{old}: a message queued before the upgrade finds no task"
    assert new in registry
    for option in OPTIONS:
        assert getattr(registry[old], option) == getattr(registry[new], option), option
    assert TASK_ROUTES[old] == TASK_ROUTES[new]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_name_runs_the_new_task(registry, old, monkeypatch):
    new, args = MOVED[old]
    ran = []
    monkeypatch.setattr(registry[new], "run", lambda *a: ran.append(a) or 7)
    result = registry[old](*args)
    assert ran == [args]
    assert result in (None, 7)  # what the new task returns (None for the one-run tasks)
