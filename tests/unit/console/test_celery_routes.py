"""Every task has a queue that some worker consumes (a task without a route would sit
in a queue nobody reads)."""

from console.celery import app
from console.celery_routes import BEAT_SCHEDULE, QUEUES, TASK_ROUTES

OUR_APPS = ("incidents.", "runbooks.", "postmortems.", "console.", "readiness.", "notifications.")


def our_tasks() -> set[str]:
    app.loader.import_default_modules()
    return {name for name in app.tasks if name.startswith(OUR_APPS)}


def test_every_task_has_a_route_to_a_declared_queue():
    queues = {q.name for q in QUEUES}
    tasks = our_tasks()
    assert tasks, "no tasks discovered: autodiscovery is broken"
    missing = sorted(t for t in tasks if t not in TASK_ROUTES)
    assert not missing, f"tasks without a queue route in console/celery_routes.py: {missing}"
    for name, route in TASK_ROUTES.items():
        assert route["queue"] in queues, name


def test_routes_name_real_tasks():
    assert set(TASK_ROUTES) <= our_tasks()


def test_beat_schedule_names_real_tasks():
    for entry in BEAT_SCHEDULE.values():
        assert entry["task"] in our_tasks()


def test_celery_is_never_eager_and_json_only():
    assert not app.conf.task_always_eager
    assert app.conf.accept_content == ["json"]
    assert app.conf.task_acks_late
    assert app.conf.task_reject_on_worker_lost


def test_soft_time_limits_are_below_hard_ones():
    # Celery refuses to send a task whose soft limit exceeds its hard limit (a beat task
    # would then never run), and the global soft limit applies to tasks without their own.
    for name in sorted(our_tasks()):
        task = app.tasks[name]
        hard = task.time_limit or app.conf.task_time_limit
        soft = task.soft_time_limit or app.conf.task_soft_time_limit
        assert soft is None or hard is None or soft <= hard, (name, soft, hard)
