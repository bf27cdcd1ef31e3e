"""A pytest plugin that fails a test when the code under test opens a network connection
while its database connection is inside a transaction it opened itself (issue 23: an HTTP
call to a slow target inside `transaction.atomic()` held SQLite's write lock for a minute
and, on PostgreSQL, row locks and worker slots).

Watched: urllib3's new connections (requests, the kubernetes client and apprise all use
it), http.client's (urllib.request) and smtplib's connect. The database and the broker
speak their own protocols over their own sockets and are not watched.

pytest-django wraps a `db` test in atomic blocks of its own, so the depth of each
connection's atomic blocks is recorded when the test body starts (after its fixtures)
and a connection is "in a transaction" only deeper than that. Another thread has its own
connections, which start at depth 0.

Enabled for tests/unit and tests/integration from tests/conftest.py; a test that means
to do it (the guard's own tests) is marked `allow_network_in_transaction`.
"""

from __future__ import annotations

import http.client
import os
import smtplib
import threading
import traceback
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import urllib3.connection
from django.db import connections

MARKER = "allow_network_in_transaction"
GUARDED_DIRS = ("unit", "integration")
ROOT = str(Path(__file__).resolve().parents[1]) + os.sep


@dataclass(frozen=True)
class Violation:
    target: str  # host:port
    alias: str
    depth: int  # atomic blocks opened by the code under test
    stack: str

    def __str__(self) -> str:
        return (
            f"a network connection to {self.target} was opened inside {self.depth} "
            f"transaction(s) on database {self.alias!r}:\n{self.stack}"
        )


@dataclass
class NetworkGuard:
    """Records network connections opened inside a transaction, from start() to stop()."""

    violations: list[Violation] = field(default_factory=list)
    _baseline: dict[int, dict[str, int]] = field(default_factory=dict)
    _active: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        """Take the calling thread's current depths as "outside the code under test"."""
        self._baseline[threading.get_ident()] = {
            alias: len(connections[alias].atomic_blocks) for alias in connections
        }
        self.violations.clear()
        self._active = True
        _GUARDS.append(self)

    def stop(self) -> list[Violation]:
        self._active = False
        if self in _GUARDS:
            _GUARDS.remove(self)
        return list(self.violations)

    def check(self, target: str) -> None:
        """Called as a connection is opened (on whichever thread opens it)."""
        if not self._active:
            return
        base = self._baseline.get(threading.get_ident(), {})
        for alias in connections:
            depth = len(connections[alias].atomic_blocks) - base.get(alias, 0)
            if depth > 0:
                stack = _our_frames()
                with self._lock:
                    self.violations.append(Violation(target, alias, depth, stack))


def _our_frames() -> str:
    """The project's own frames (not the HTTP libraries'), innermost last: where the
    call was made and which transaction it sits in."""
    ours = [
        frame
        for frame in traceback.extract_stack()[:-3]
        if frame.filename.startswith(ROOT)
        and "/.venv/" not in frame.filename
        and frame.filename != __file__
    ]
    return "".join(traceback.format_list(ours[-8:]))


_GUARDS: list[NetworkGuard] = []
_PATCHED: dict[str, Any] = {}


def _notify(target: str) -> None:
    for guard in list(_GUARDS):
        guard.check(target)


def install() -> None:
    """Wrap the connection openers once per process (idempotent)."""
    if _PATCHED:
        return
    new_conn = urllib3.connection.HTTPConnection._new_conn
    plain_connect = http.client.HTTPConnection.connect
    smtp_connect = smtplib.SMTP.connect

    def _new_conn(self: urllib3.connection.HTTPConnection) -> Any:
        _notify(f"{self.host}:{self.port}")
        return new_conn(self)

    def http_connect(self: http.client.HTTPConnection) -> Any:
        # urllib.request (the drills' simulator adapter); urllib3 overrides connect(),
        # so a urllib3 connection is not counted twice.
        _notify(f"{self.host}:{self.port}")
        return plain_connect(self)

    def connect(self: smtplib.SMTP, host: str = "localhost", port: int = 0, *a: Any) -> Any:
        _notify(f"{host}:{port or smtplib.SMTP_PORT} (SMTP)")
        return smtp_connect(self, host, port, *a)

    _PATCHED.update(new_conn=new_conn, plain_connect=plain_connect, smtp_connect=smtp_connect)
    http.client.HTTPConnection.connect = http_connect  # type: ignore[method-assign]
    urllib3.connection.HTTPConnection._new_conn = _new_conn  # type: ignore[method-assign]
    smtplib.SMTP.connect = connect  # type: ignore[method-assign,assignment]


# --- the plugin ----------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: this test opens a network connection inside a transaction on purpose "
        "(tests/network_guard.py does not fail it)",
    )
    install()


def _guarded(item: pytest.Item) -> bool:
    parts = item.path.relative_to(item.config.rootpath).parts
    return (
        len(parts) > 1
        and parts[0] == "tests"
        and parts[1] in GUARDED_DIRS
        and item.get_closest_marker(MARKER) is None
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    if not _guarded(item):
        return (yield)
    guard = NetworkGuard()
    guard.start()
    try:
        result = yield
    finally:
        found = guard.stop()
    if found:
        pytest.fail(
            "Network call inside a database transaction (issue 23: call after commit, "
            "e.g. transaction.on_commit, or claim / commit / call / record):\n\n"
            + "\n".join(str(v) for v in found[:3]),
            pytrace=False,
        )
    return result
