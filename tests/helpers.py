"""Helpers for tests that start real processes: free ports, waiting with deadlines."""

import socket
import time
from collections.abc import Callable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def wait_for(check: Callable[[], object], *, timeout: float, what: str, every: float = 0.2):
    """Poll `check` until it returns something truthy, or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except Exception as exc:  # the service may not be up yet
            last_error = exc
        time.sleep(every)
    raise AssertionError(
        f"timed out after {timeout}s waiting for {what} (last error: {last_error})"
    )


def task_callbacks(callbacks: list) -> list:
    """The after-commit callbacks that queue work, leaving out the timeline's
    announcement (incidents.services.timeline.timeline_announce), which every write
    that lands on the timeline adds."""
    return [c for c in callbacks if "timeline_announce" not in c.__qualname__]


def http_session():
    """A requests session for talking to a stack under test. gunicorn closes an idle
    keep-alive connection after 2 s; a poll that reuses it at that instant gets
    "connection reset". Browsers and Alertmanager retry such a request; so does this
    session, for idempotent methods only (urllib3's default list), never a POST."""
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    session = requests.Session()
    retry = Retry(total=3, connect=3, read=3, status=0, redirect=0, backoff_factor=0.1)
    session.mount("http://", HTTPAdapter(max_retries=retry))
    return session
