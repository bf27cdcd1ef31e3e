"""The guard and the deadline reach clients that do not use urllib3: the standard
library's http.client (urllib, and slack_sdk's WebClient on it) and httpx (the Mattermost
driver), through socket.create_connection (console/outgoing/connect.py)."""

import time
import urllib.request

import httpx
import pytest

from console.outgoing import OutgoingRefused, deadline, guarded
from tests.unit.console.outgoing_servers import Dripper, Recorder

LATE = 10.0


@pytest.fixture
def recorder():
    server = Recorder("127.0.0.1")
    yield server
    server.close()


@pytest.fixture
def dripper():
    server = Dripper()
    yield server
    server.close()


def test_urllib_to_an_internal_address_is_refused_inside_the_guard(recorder):
    with pytest.raises(OutgoingRefused), guarded() as guard:
        urllib.request.urlopen(f"{recorder.url}/hook", timeout=5)  # noqa: S310 (the point)
    assert guard.refused is not None
    assert recorder.requests == []


def test_httpx_to_an_internal_address_is_refused_inside_the_guard(recorder):
    with pytest.raises(OutgoingRefused), guarded(), httpx.Client() as client:
        client.get(f"{recorder.url}/api/v4/users/me")
    assert recorder.requests == []


def test_the_allowlist_admits_both(settings, recorder):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    with guarded():
        with urllib.request.urlopen(f"{recorder.url}/a", timeout=5) as answer:  # noqa: S310
            assert answer.status == 200
        with httpx.Client() as client:
            assert client.get(f"{recorder.url}/b").status_code == 200
    assert len(recorder.requests) == 2


def test_outside_a_block_the_standard_library_is_untouched(recorder):
    with urllib.request.urlopen(f"{recorder.url}/c", timeout=5) as answer:  # noqa: S310
        assert answer.status == 200


def _urllib(url: str) -> None:
    urllib.request.urlopen(url, timeout=30).read()  # noqa: S310


def _httpx(url: str) -> None:
    with httpx.Client(timeout=30) as session:
        session.get(url)


@pytest.mark.parametrize("call", [_urllib, _httpx])
def test_a_dripping_server_is_cut_at_the_deadline(dripper, call):
    started = time.monotonic()
    # Each client names the cut its own way (TimeoutError, OSError, httpx.ReadError).
    with pytest.raises((OSError, httpx.HTTPError)), deadline(1.5):
        call(f"{dripper.url}/x")
    assert time.monotonic() - started < LATE
