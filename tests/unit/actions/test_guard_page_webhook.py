"""The guard's paging webhook (GUARD_PAGE_WEBHOOK_URL) goes through the outgoing guard:
no internal address unless allowlisted, and an overall deadline."""

import time

import pytest

from actions.guard.remedy import _deliver
from tests.unit.console.outgoing_servers import Dripper, Recorder


@pytest.fixture
def hook():
    server = Recorder()
    yield server
    server.close()


def test_an_internal_paging_webhook_is_refused_unless_allowlisted(settings, hook):
    settings.GUARD_PAGE_WEBHOOK_URL = f"{hook.url}/page"
    said = _deliver("breached").english
    assert "127.0.0.1 is a loopback address" in said
    assert hook.requests == []
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    assert _deliver("breached").english == "(Sent to the paging webhook.)"
    assert [path for path, _ in hook.requests] == ["/page"]


def test_a_paging_webhook_that_drips_is_cut_at_the_deadline(settings):
    server = Dripper()
    try:
        settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1"
        settings.GUARD_PAGE_WEBHOOK_URL = f"{server.url}/page"
        settings.GUARD_PAGE_TIMEOUT_SECONDS = 1.0
        started = time.monotonic()
        said = _deliver("breached").english
        assert time.monotonic() - started < 10
        assert "could not be delivered" in said
        assert "DeadlineExceeded" in said
    finally:
        server.close()
