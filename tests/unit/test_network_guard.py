"""The detector of tests/network_guard.py, proven against real local servers: a call
inside a transaction the code opened is reported (HTTP through requests, plain urllib3
as the kubernetes client uses it and urllib.request, SMTP through smtplib), the same call after the
commit is not, nor is the test's own wrapping transaction, nor the database or broker."""

from __future__ import annotations

import smtplib
import socketserver
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
import urllib3
from django.db import connection, transaction

from incidents.models import Incident
from tests import network_guard
from tests.network_guard import MARKER, NetworkGuard

pytestmark = [pytest.mark.django_db, getattr(pytest.mark, MARKER)]


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


class _Smtp(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.wfile.write(b"220 local test\r\n")
        for line in self.rfile:
            if line.upper().startswith(b"QUIT"):
                self.wfile.write(b"221 bye\r\n")
                return
            self.wfile.write(b"250 ok\r\n")


@pytest.fixture
def http_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture
def smtp_port():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Smtp)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def guard():
    watch = NetworkGuard()
    watch.start()  # inside pytest-django's own atomic block: that depth is the baseline
    yield watch
    watch.stop()


def test_an_http_call_inside_atomic_is_reported(guard, http_url):
    with transaction.atomic():
        Incident.objects.exists()
        assert requests.get(http_url, timeout=5).text == "ok"
    (found,) = guard.stop()
    assert found.target.startswith("127.0.0.1:")
    assert (found.depth, found.alias) == (1, "default")
    assert "test_an_http_call_inside_atomic_is_reported" in found.stack


def test_nested_atomic_and_urllib3_as_the_kubernetes_client_uses_it(guard, http_url):
    pool = urllib3.PoolManager()
    with transaction.atomic(), transaction.atomic():
        assert pool.request("GET", http_url, timeout=5).status == 200
    (found,) = guard.stop()
    assert found.depth == 2


def test_urllib_request_inside_atomic_is_reported_once(guard, http_url):
    with transaction.atomic(), urllib.request.urlopen(http_url, timeout=5) as answer:  # noqa: S310
        assert answer.read() == b"ok"
    (found,) = guard.stop()
    assert found.target.startswith("127.0.0.1:")


def test_an_smtp_connection_inside_atomic_is_reported(guard, smtp_port):
    with transaction.atomic(), smtplib.SMTP("127.0.0.1", smtp_port, timeout=5) as smtp:
        smtp.noop()
    (found,) = guard.stop()
    assert found.target == f"127.0.0.1:{smtp_port} (SMTP)"


def test_the_same_calls_outside_a_transaction_pass(guard, http_url, smtp_port):
    assert connection.in_atomic_block  # the test's own wrapping block: not counted
    with transaction.atomic():
        Incident.objects.exists()
    assert requests.get(http_url, timeout=5).status_code == 200
    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=5) as smtp:
        smtp.noop()
    assert guard.stop() == []


def test_after_commit_passes(guard, http_url, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        transaction.on_commit(lambda: requests.get(http_url, timeout=5))
    assert guard.stop() == []


def test_another_threads_call_is_judged_by_its_own_connection(guard, http_url):
    # The test's thread is inside a transaction; a thread with none of its own is fine.
    with transaction.atomic():
        thread = threading.Thread(target=lambda: requests.get(http_url, timeout=5))
        thread.start()
        thread.join(10)
    assert guard.stop() == []


def test_the_plugin_is_on_for_this_suite(request):
    assert request.config.pluginmanager.has_plugin("tests.network_guard")
    assert request.node.get_closest_marker(MARKER) is not None  # and off for this file


class _Item:
    """What the hook reads of a test item: its path and markers."""

    def __init__(self, config: pytest.Config, path) -> None:
        self.config, self.path = config, path

    def get_closest_marker(self, name: str) -> None:
        return None


def _run_hook(item: _Item, body) -> None:
    hook = network_guard.pytest_runtest_call(item)
    next(hook)  # the guard starts, as before a test body
    body()
    with pytest.raises(StopIteration):
        hook.send(None)  # the body returned: the hook fails the test or lets it pass


def test_the_hook_fails_a_test_that_calls_inside_a_transaction(request, http_url):
    item = _Item(request.config, request.config.rootpath / "tests/unit/x/test_y.py")

    def inside() -> None:
        with transaction.atomic():
            requests.get(http_url, timeout=5)

    with pytest.raises(pytest.fail.Exception, match="Network call inside a database trans"):
        _run_hook(item, inside)
    _run_hook(item, lambda: requests.get(http_url, timeout=5))  # passes
    # Outside tests/unit and tests/integration (e2e), it does not watch.
    e2e = _Item(request.config, request.config.rootpath / "tests/e2e/test_y.py")
    _run_hook(e2e, inside)
