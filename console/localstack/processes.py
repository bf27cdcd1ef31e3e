"""Tie a child process's life to its parent's (Linux prctl; a no-op elsewhere).

Signals let a parent stop its children, but a parent that is SIGKILLed (or OOM-killed)
runs no code, so its children would be orphaned and keep running. PR_SET_PDEATHSIG asks
the kernel to signal the child when its parent dies: no polling, no watchdog process,
and it survives exec. We send SIGTERM, not SIGKILL, so the child can still stop its own
children (the worker stops beat and its pool; gunicorn its workers).
"""

import contextlib
import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_libc = None
with contextlib.suppress(OSError):
    _libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> bool:
    prctl = getattr(_libc, "prctl", None)
    if prctl is None:  # not Linux
        return False
    return prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM) -> None:
    """Have the kernel send `sig` to this process when its parent exits. Call in the
    child; `parent_pid` is the parent we expect, read before the fork."""
    _prctl(PR_SET_PDEATHSIG, sig)
    # The parent may have died between the fork and the prctl: nobody would signal us.
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), sig)


def become_subreaper() -> bool:
    """Orphaned grandchildren are re-parented to this process instead of init, so it can
    reap them (a container's init often reaps nothing)."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)
