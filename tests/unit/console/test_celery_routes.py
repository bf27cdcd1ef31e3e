"""Every task has a queue that some worker consumes (a task without a route would sit
in a queue nobody reads)."""

import re
from pathlib import Path

import pytest
import yaml

from config.celery import app
from config.celery_routes import BEAT_SCHEDULE, QUEUES, TASK_ROUTES
from console.queues import ACTIONS, NOTIFICATIONS, QUEUE_NAMES

OUR_APPS = (
    "incidents.",
    "runbooks.",
    "actions.",
    "drills.",
    "postmortems.",
    "console.",
    "pager.",
    "chatops.",
    "readiness.",
    "notifications.",
)


def our_tasks() -> set[str]:
    app.loader.import_default_modules()
    return {name for name in app.tasks if name.startswith(OUR_APPS)}


def test_every_task_has_a_route_to_a_declared_queue():
    queues = {q.name for q in QUEUES}
    tasks = our_tasks()
    assert tasks, "no tasks discovered: autodiscovery is broken"
    missing = sorted(t for t in tasks if t not in TASK_ROUTES)
    assert not missing, f"tasks without a queue route in config/celery_routes.py: {missing}"
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


# Wherever a worker is started, the queues given to its workers name every queue, or that
# queue's tasks wait for ever. Where it is deployed (make run, Kubernetes, compose),
# deliveries also get workers of their own: a separate queue consumed by the same pool
# still lets slow deliveries hold every pool slot while action runs wait.
ROOT = Path(__file__).resolve().parents[3]
# Test and bench stacks: one worker may take every queue (a test worker is not production).
TEST_STARTERS = (
    "tests/integration/conftest.py",
    "tests/bench/actions.py",
    "tests/bench/ingest_e2e.py",
)
# This file names the pattern itself.
SKIP = {"tests/unit/console/test_celery_routes.py"}
QUEUE_LIST = re.compile(r"""-Q["'\s,]+([\w,]+)""")


def queues_of(command: list[str] | str) -> set[str]:
    """The -Q list of a `celery worker` command line (a list, or a shell string)."""
    args = command.split() if isinstance(command, str) else command
    assert "worker" in args, command
    assert "-Q" in args, command
    return set(args[args.index("-Q") + 1].split(","))


def runstack_workers() -> list[set[str]]:
    from console.management.commands.runstack import Command

    commands = Command()._console_commands("127.0.0.1", 8000, Path("/tmp/var"))
    return [queues_of(cmd) for cmd in commands.values() if "worker" in cmd]


def k8s_workers() -> list[set[str]]:
    docs = [
        doc
        for path in sorted((ROOT / "deploy/k8s/base").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
    ]
    return [
        queues_of(container["command"])
        for doc in docs
        if doc and doc["kind"] == "Deployment"
        for container in doc["spec"]["template"]["spec"]["containers"]
        if "worker" in container["command"]
    ]


def compose_workers() -> list[set[str]]:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    return [
        queues_of(service["command"])
        for service in services.values()
        if "celery" in str(service.get("command", "")).split()
        and "worker" in str(service["command"]).split()
    ]


@pytest.mark.parametrize("workers", [runstack_workers, k8s_workers, compose_workers])
def test_deployed_workers_cover_every_queue_and_keep_deliveries_apart(workers):
    queues = {q.name for q in QUEUES}
    started = workers()
    assert set().union(*started) == queues, started
    for consumed in started:
        assert consumed <= queues, consumed
        # A worker taking both would let deliveries occupy the slots action runs need.
        assert not {ACTIONS, NOTIFICATIONS} <= consumed, consumed


def test_every_queue_list_names_declared_queues_and_each_place_covers_them():
    """Every -Q list anywhere (docs, test stacks) names only declared queues, and the
    lists in one place (a file; the Kubernetes manifests together) name all of them."""
    queues = {q.name for q in QUEUES}
    assert "notifications" in queues
    places: dict[str, list[set[str]]] = {}
    for path in sorted(ROOT.glob("**/*")):
        if path.suffix not in {".py", ".yaml", ".yml", ".md", ""} or not path.is_file():
            continue
        rel = path.relative_to(ROOT).as_posix()
        # Hidden directories are tools' state (.venv, .git, caches, .hypothesis's examples
        # from an earlier run), not places that start workers.
        hidden = any(part.startswith(".") for part in path.relative_to(ROOT).parts[:-1])
        if hidden or rel.startswith(("static/", "node_modules/", "var/")) or rel in SKIP:
            continue
        if "worker" not in (text := path.read_text(errors="replace")):
            continue
        for found in QUEUE_LIST.findall(text):
            consumed = set(found.split(","))
            assert consumed <= queues, f"{rel}: -Q {found} (queues: {queues})"
            place = "deploy/k8s" if rel.startswith("deploy/k8s/") else rel
            places.setdefault(place, []).append(consumed)
    for place, lists in places.items():
        assert set().union(*lists) == queues, f"{place}: {lists} (queues: {queues})"
    assert set(TEST_STARTERS) | {"docs/operations.md", "deploy/k8s"} <= set(places)


def test_deliveries_go_to_the_notifications_queue():
    route = app.amqp.router.route({}, "notifications.tasks.delivery_send", (1,), {})
    assert route["queue"].name == "notifications"
    # The queue the platform counts action workers by (console.liveness) is the one action
    # runs are routed to, under every name their task has had.
    action_runs = {route["queue"] for name, route in TASK_ROUTES.items()
                   if name.endswith(".action_run_execute")}  # fmt: skip
    assert action_runs == {ACTIONS} == {"actions"}


def test_the_declared_queues_are_the_platforms_names():
    assert tuple(q.name for q in QUEUES) == QUEUE_NAMES
    assert app.conf.task_default_queue in QUEUE_NAMES
