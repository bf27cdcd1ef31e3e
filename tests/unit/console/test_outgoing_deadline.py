"""The overall deadline (console/outgoing): a server that drips a header line every half
second keeps requests' per-read timeout happy forever; the deadline ends the call, for
requests (user_request, service_request) and for a client on urllib3 alone (the
kubernetes client's way), releases the sockets, and leaves other threads alone."""

import contextvars
import os
import socket
import threading
import time

import pytest
import requests
import urllib3

from console.outgoing import DeadlineExceeded, deadline, service_request, user_request
from tests.helpers import wait_for
from tests.unit.console.outgoing_servers import Dripper, Recorder

# The dripper would hold a caller for five minutes; every test must end far sooner.
LATE = 10.0


@pytest.fixture
def dripper():
    server = Dripper()
    yield server
    server.close()


@pytest.fixture
def recorder():
    server = Recorder()
    yield server
    server.close()


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_user_request_ends_at_its_deadline(settings, dripper):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        user_request("POST", f"{dripper.url}/hook", deadline=1.5, json={"text": "hi"})
    assert 1.4 < time.monotonic() - started < LATE
    assert dripper.connections == 1


def test_service_request_ends_at_its_deadline_and_is_a_requests_timeout(dripper):
    started = time.monotonic()
    with pytest.raises(requests.Timeout):  # what existing handlers catch
        service_request("GET", f"{dripper.url}/api/v1/query", deadline=1.5)
    assert time.monotonic() - started < LATE


def test_a_urllib3_client_inside_deadline_ends_and_releases_its_sockets(dripper):
    """The kubernetes client's way: its own PoolManager, keep-alive, retries."""
    pool = urllib3.PoolManager(retries=urllib3.Retry(3))
    before = open_descriptors()
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded), deadline(1.5):
        pool.request("GET", f"{dripper.url}/api/v1/pods", timeout=urllib3.Timeout(5, 5))
    assert time.monotonic() - started < LATE
    assert dripper.released.wait(LATE), "the server still holds an open connection"
    pool.clear()
    # The dripper signals `released` from inside its `with conn:`, a moment before its
    # own end of the connection is closed: wait for that, never for our end.
    wait_for(lambda: open_descriptors() <= before, timeout=LATE, what="the sockets to close")


def test_a_fast_call_is_untouched_and_its_connection_does_not_outlive_the_block(recorder):
    pool = urllib3.PoolManager()
    with deadline(5):
        first = pool.request("GET", f"{recorder.url}/a")
    assert first.status == 200
    assert first.data == b"ok"
    # The pooled connection was shut down with the block (nothing bounds it after);
    # urllib3 notices and opens a new one, inside the next block or outside any.
    with deadline(5):
        assert pool.request("GET", f"{recorder.url}/b").status == 200
    assert pool.request("GET", f"{recorder.url}/c").status == 200
    assert [path for path, _ in recorder.requests] == ["/a", "/b", "/c"]


def test_a_block_that_makes_no_call_is_never_late():
    with deadline(0.2):
        time.sleep(0.4)


def test_no_connection_is_opened_after_the_block(recorder):
    """A thread that outlives its block (apprise abandons slow workers) keeps the block
    in its context: it may open nothing new."""
    pool = urllib3.PoolManager(retries=False)
    caught: list[BaseException] = []
    go = threading.Event()

    def late_worker():
        go.wait(5)
        try:
            pool.request("GET", f"{recorder.url}/late")
        except BaseException as exc:
            caught.append(exc)

    with deadline(5):
        thread = threading.Thread(target=contextvars.copy_context().run, args=(late_worker,))
        thread.start()
    go.set()
    thread.join(LATE)
    assert recorder.requests == []
    assert caught
    assert isinstance(caught[0], urllib3.exceptions.ConnectTimeoutError)


def test_deadlines_are_per_thread(settings, dripper, recorder):
    """One thread's deadline cuts its own call only; another thread's calls, with a
    longer deadline or none, go on."""
    results: dict[str, object] = {}

    def slow():
        try:
            service_request("GET", dripper.url, deadline=1.0)
        except DeadlineExceeded as exc:
            results["slow"] = exc

    def steady():
        answers = []
        with deadline(30):
            for n in range(15):
                answers.append(requests.get(f"{recorder.url}/{n}", timeout=5).status_code)
                time.sleep(0.1)
        results["steady"] = answers

    threads = [threading.Thread(target=slow), threading.Thread(target=steady)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(LATE * 2)
    assert isinstance(results["slow"], DeadlineExceeded)
    assert results["steady"] == [200] * 15


def test_a_body_that_drips_is_cut_too(settings):
    """Headers complete, then a body sent a byte at a time."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve():
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            try:
                for _ in range(1000):
                    time.sleep(0.3)
                    conn.sendall(b"x")
            except OSError:
                pass

    threading.Thread(target=serve, daemon=True).start()
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1"
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        user_request("GET", f"http://127.0.0.1:{port}/", deadline=1.0)
    assert time.monotonic() - started < LATE
    listener.close()


def test_a_deadline_must_be_positive():
    with pytest.raises(ValueError, match="positive"), deadline(0):
        pass
