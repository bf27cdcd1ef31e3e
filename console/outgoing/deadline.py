"""An overall deadline for every HTTP connection opened inside a block.

A per-read timeout does not bound a call: a server that sends one byte just before each
read times out holds the caller for as long as it likes. So each connection urllib3
opens inside `deadline(seconds)` (requests, apprise and the kubernetes client all open
theirs through urllib3; console/outgoing/connect.py hooks that one place) is registered
with the block, and a timer shuts the registered sockets down when the time is up: a
read blocked on one of them returns at once and the call fails.

The block is a context variable, so it follows the code into the threads apprise copies
its context into, and each thread (Celery, gunicorn) has its own. A connection opened
in a block does not outlive it: at the end its socket is shut down too, since a pooled
keep-alive connection reused later would no longer be bounded by anything.
"""

from __future__ import annotations

import contextlib
import contextvars
import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import urllib3

from console.outgoing.errors import DeadlineExceeded

_active: contextvars.ContextVar[tuple[Deadline, ...]] = contextvars.ContextVar(
    "console_outgoing_deadlines", default=()
)
# What a call cut short by the deadline fails with, depending on the client and the
# moment: a reset or EOF (OSError, http.client), urllib3's wrapping of one, or a body
# cut in the middle (ValueError from a JSON parser).
_CUT_SHORT = (OSError, http.client.HTTPException, urllib3.exceptions.HTTPError, ValueError)


class Deadline:
    """One block's end time and the sockets opened under it."""

    def __init__(self, seconds: float) -> None:
        if not seconds > 0:
            raise ValueError(f"a deadline must be a positive number of seconds, not {seconds!r}")
        self.seconds = seconds
        self.ends_at = time.monotonic() + seconds
        self.fired = False  # the time ran out on a connection (open, or wanted)
        self._open = True
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.name = "outgoing-deadline"

    def remaining(self) -> float:
        return self.ends_at - time.monotonic() if self._open else 0.0

    def register(self, sock: socket.socket) -> bool:
        """Watch `sock`; False when the time is already up (the caller closes it).

        A duplicate of the socket is kept, not the socket: TLS wraps a connection's
        socket in a new object and detaches the old one, and a duplicate descriptor
        can never be a later, unrelated socket that reused the number.
        """
        with self._lock:
            if self.fired or not self._open:
                return False
            self._sockets.append(sock.dup())
        return True

    def refuse(self) -> None:
        """A connection was wanted after the time ran out."""
        with self._lock:
            self.fired = True

    def start(self) -> None:
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if not self._open or not self._sockets:
                return  # nothing to cut: a block that made no call is not late
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut_down(sock)

    def close(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._open = False
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut_down(sock)
            sock.close()


def _shut_down(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the other end
        sock.shutdown(socket.SHUT_RDWR)


def active() -> tuple[Deadline, ...]:
    return _active.get()


@contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    """Bound every HTTP connection opened inside the block by `seconds` in all.

    Raises DeadlineExceeded when the time runs out: from the call that was cut short,
    or at the end of the block if the client swallowed that failure (apprise does) or
    took a truncated answer for a whole one (an HTTP header block cut off looks
    complete to http.client).
    """
    block = Deadline(seconds)
    token = _active.set((*_active.get(), block))
    block.start()
    try:
        yield block
    except _CUT_SHORT as exc:
        if block.fired and not isinstance(exc, DeadlineExceeded):
            raise DeadlineExceeded(_message(seconds)) from exc
        raise
    finally:
        _active.reset(token)
        block.close()
    if block.fired:
        raise DeadlineExceeded(_message(seconds))


def _message(seconds: float) -> str:
    return f"no complete answer within the deadline of {seconds:g} s"
