"""The supervisor behind `make run` (runstack): start children, and stop all of them,
with everything they started, when any one exits or on Ctrl-C / SIGTERM.

Each child leads its own process group (a new session), and stopping signals the whole
group: a child's own children (the worker's pool and embedded beat, gunicorn's workers)
stop with it even when the child itself is already dead, which is exactly when they
would otherwise be orphaned. Every child also gets a parent-death signal, so a
supervisor that is SIGKILLed still takes the stack down (see processes.py).
"""

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from functools import partial

from console.localstack.processes import become_subreaper, die_with_parent

POLL_SECONDS = 0.2


class Supervisor:
    def __init__(self, *, grace_seconds: float = 15.0, log: Callable[[str], object] = print):
        self.grace_seconds = grace_seconds
        self.log = log
        self.children: dict[str, subprocess.Popen] = {}
        self._stopping = False
        # Grandchildren orphaned by a dying child come to us, so we can reap them and
        # tell when a process group is really empty.
        become_subreaper()

    def start(self, name: str, cmd: list[str], *, env: dict[str, str]) -> subprocess.Popen:
        proc = subprocess.Popen(  # noqa: S603 (our own command lines)
            cmd, env=env, start_new_session=True, preexec_fn=partial(die_with_parent, os.getpid())
        )
        self.children[name] = proc
        return proc

    def run(self) -> int:
        """Wait until a child exits or we are told to stop; stop everything; return the
        exit code (1 when a child died on its own)."""

        def stop(signum, frame):
            self._stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        code = 0
        while not self._stopping:
            for name, proc in self.children.items():
                if proc.poll() is not None:
                    self.log(f"{name} exited with {proc.returncode}; stopping.")
                    self._stopping, code = True, 1
                    break
            else:
                time.sleep(POLL_SECONDS)
        self.stop_all()
        return code

    def stop_all(self) -> None:
        """SIGTERM every group, give them `grace_seconds`, then SIGKILL what is left."""
        self._signal_groups(signal.SIGTERM)
        if not self._wait_groups_empty(self.grace_seconds):
            self.log("some processes did not stop in time; killing them.")
            self._signal_groups(signal.SIGKILL)
            self._wait_groups_empty(5.0)

    def _signal_groups(self, sig: int) -> None:
        for proc in self.children.values():
            # The leader may be gone while its group lives on: signal the group anyway.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)

    def _wait_groups_empty(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            if not any(self._group_alive(proc) for proc in self.children.values()):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)

    @staticmethod
    def _group_alive(proc: subprocess.Popen) -> bool:
        proc.poll()  # reap the leader first, keeping its exit code
        # Reap exited members re-parented to us: a zombie still counts as a group member.
        with contextlib.suppress(ChildProcessError):
            while os.waitid(os.P_PGID, proc.pid, os.WEXITED | os.WNOHANG) is not None:
                pass
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
