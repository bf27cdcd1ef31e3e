"""`make run` leaves nothing behind: whatever stops the stack (a child dying, Ctrl-C, the
supervisor itself being killed), no process of it lives on. Celery beat, embedded in the
worker, used to outlive a killed worker and kept sending due tasks."""

import contextlib
import os
import signal
from pathlib import Path

import psutil
import pytest
import requests

from tests.helpers import wait_for

pytestmark = [pytest.mark.smoke, pytest.mark.timeout(240)]


def stack_processes(var: Path) -> list[psutil.Process]:
    """Every live process started for this stack (they all carry its VAR_DIR), however
    it was reparented. Zombies have exited and only wait to be reaped."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if proc.environ().get("VAR_DIR") == str(var):
                found.append(proc)
    return found


def describe(procs: list[psutil.Process]) -> str:
    lines = []
    for p in procs:
        with contextlib.suppress(psutil.Error):
            lines.append(f"{p.pid} ppid={p.ppid()} {' '.join(p.cmdline())[:120]}")
    return "\n".join(lines)


def supervisor(var: Path) -> psutil.Process:
    (proc,) = [p for p in stack_processes(var) if "runstack" in " ".join(p.cmdline())]
    return proc


def celery_workers(var: Path) -> list[list[str]]:
    return [p.cmdline() for p in supervisor(var).children() if "worker" in p.cmdline()]


def worker_main(var: Path) -> psutil.Process:
    """The worker that runs actions, with embedded beat (the notifier is a worker too)."""
    sup = supervisor(var)
    (proc,) = [p for p in sup.children() if "worker" in p.cmdline() and "--beat" in p.cmdline()]
    return proc


@pytest.fixture
def stack(make_run):
    run = make_run(console_only=True)
    yield run
    # A failing test must not leak processes onto a shared machine.
    for proc in stack_processes(run["var"]):
        with contextlib.suppress(psutil.Error):
            proc.kill()


def assert_nothing_survives(var: Path) -> None:
    def gone():
        return not stack_processes(var)

    try:
        wait_for(gone, timeout=60, what="every process of the stack to exit")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; still running:\n{describe(stack_processes(var))}") from None


def test_killing_the_worker_stops_the_stack_and_its_beat(stack):
    var = stack["var"]
    worker = worker_main(var)
    # Embedded beat (-B) and the pool are children of the worker's main process.
    children = wait_for(lambda: len(worker.children()) >= 2 and worker.children(), timeout=60,
                        what="the worker's beat and pool processes")  # fmt: skip
    assert any(p.pid for p in children)
    sup = supervisor(var)

    os.kill(worker.pid, signal.SIGKILL)

    # The supervisor stops the whole stack (a dead worker is not restarted: the user sees
    # the run end with "worker exited" rather than a console whose actions never run).
    assert_nothing_survives(var)
    # A process in the middle of exiting already shows no environment (so no VAR_DIR):
    # give the supervisor the moment it needs to finish exiting.
    wait_for(lambda: not sup.is_running() or sup.status() == psutil.STATUS_ZOMBIE,
             timeout=10, what="the supervisor to exit")  # fmt: skip
    assert "worker exited" in stack["log"].read_text()


def test_beat_dies_with_its_worker_even_when_nobody_cleans_up(stack):
    """Outside `make run` (a container whose worker is OOM-killed) no supervisor signals
    the group: embedded beat must notice its worker is gone by itself."""
    var = stack["var"]
    worker = worker_main(var)
    children = wait_for(lambda: len(worker.children()) >= 2 and worker.children(), timeout=60,
                        what="the worker's beat and pool processes")  # fmt: skip
    sup = supervisor(var)
    sup.suspend()  # the supervisor cannot help
    try:
        os.kill(worker.pid, signal.SIGKILL)

        def orphans():
            return [p for p in children if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]

        try:
            wait_for(lambda: not orphans(), timeout=30, what="beat and the pool to exit")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; still running:\n{describe(orphans())}") from None
    finally:
        sup.resume()
    assert_nothing_survives(var)


def test_ctrl_c_leaves_nothing_behind(stack):
    var = stack["var"]
    wait_for(lambda: len(worker_main(var).children()) >= 2, timeout=60, what="beat and pool")

    # Two workers: actions (and the rest) and the notifier, never both in one.
    queues = sorted(cmd[cmd.index("-Q") + 1] for cmd in celery_workers(var))
    assert queues == ["default,actions", "notifications"]

    # Embedded mode (SQLite, filesystem broker): both heartbeats reach /readyz.
    def worker_beats():
        body = requests.get(stack["base"] + "/readyz", timeout=5).json()
        return body["status"] == "ok" and body

    ready = wait_for(worker_beats, timeout=60, what="the workers' heartbeats")
    assert ready["workers"]["alive"] == 1  # the notifier is not a worker that runs actions
    assert ready["workers"]["queues"] == {"default": 1, "actions": 1, "notifications": 1}
    os.kill(supervisor(var).pid, signal.SIGINT)
    assert_nothing_survives(var)


def test_killing_the_supervisor_takes_its_children_with_it(stack):
    var = stack["var"]
    wait_for(lambda: len(worker_main(var).children()) >= 2, timeout=60, what="beat and pool")
    # SIGKILL cannot be caught: the children must notice their parent is gone themselves.
    os.kill(supervisor(var).pid, signal.SIGKILL)
    assert_nothing_survives(var)
