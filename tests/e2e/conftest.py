"""Browser tests: Debian's headless Chromium driven by Playwright (never a downloaded
browser)."""

import os
from pathlib import Path

# Playwright's sync API runs an event loop in this thread; the ORM calls that the tests and
# the fixtures make are still synchronous and safe.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

import pytest
from django.conf import settings as django_settings
from django.db import connections

from tests.chromium import chromium

# Real processes for the action test: the simulator and a Celery worker on Redis.
from tests.integration.actions.conftest import cluster, sim  # noqa: F401
from tests.integration.conftest import redis_broker, require_postgres, start_worker  # noqa: F401

SHOTS = Path(django_settings.BASE_DIR) / "var" / "screenshots"


@pytest.fixture
def browser():
    with chromium() as browser:
        try:
            yield browser
        finally:
            # While Playwright's loop runs, Django keeps this thread's connections in
            # context-local storage; the test's own connection lives there and nobody else
            # would close it (the test database could then not be dropped).
            connections.close_all()
