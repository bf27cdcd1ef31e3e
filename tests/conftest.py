import json
import os

import pytest
from django.contrib.auth.models import Group
from django.utils import translation

from console import roles
from tests import flush_truncate

# Django's flush between transactional tests may TRUNCATE the append-only tables.
flush_truncate.install()
# Fails a unit or integration test whose code opens a network connection inside a
# database transaction (issue 23); see the module.
pytest_plugins = ["tests.network_guard"]

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
TOKEN = "test-alertmanager-token"


def need_service(name: str, available: bool, why: str = "") -> None:
    """Skip when a real service is missing, or fail under REQUIRE_SERVICES=1 (CI)."""
    if available:
        return
    message = f"{name} is not available{': ' + why if why else ''}"
    if REQUIRE_SERVICES:
        pytest.fail(f"REQUIRE_SERVICES=1 and {message}")
    pytest.skip(message)


@pytest.fixture
def make_user(django_user_model):
    def _make(username: str = "alice", role: str | None = roles.RESPONDER, **kw):
        user = django_user_model.objects.create_user(
            username=username, password="pw-" + username, **kw
        )
        if role:
            user.groups.add(Group.objects.get(name=role))
        return user

    return _make


@pytest.fixture
def post_webhook(client):
    def _post(body, *, token: str = TOKEN, raw: bytes | None = None):
        data = raw if raw is not None else json.dumps(body)
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token is not None else {}
        return client.post(
            "/api/v1/alerts/alertmanager", data=data, content_type="application/json", **headers
        )

    return _post


def pytest_collection_modifyitems(items):
    """Everything under tests/integration/ needs real services: it must carry the
    `integration` (or `smoke`) marker, so `make test-fast` never starts a worker."""
    unmarked = [
        item.nodeid
        for item in items
        if "integration" in item.path.relative_to(item.config.rootpath).parts[:2]
        and not any(item.get_closest_marker(name) for name in ("integration", "smoke"))
    ]
    if unmarked:
        raise pytest.UsageError(
            "tests under tests/integration/ without the integration marker: "
            + ", ".join(unmarked[:5])
        )
    # The drill and branch modules first: they are the longest (waits on compressed-time
    # alerts, little CPU), so under xdist (`--dist loadfile`, whole modules per worker)
    # the rest of the suite runs beside them instead of after them. Stable: the order
    # within each part stays.
    items.sort(
        key=lambda item: (
            not (item.get_closest_marker("drill") or item.get_closest_marker("branches"))
        )
    )


@pytest.fixture(scope="session")
def django_db_modify_db_settings_xdist_suffix() -> None:
    """Each xdist worker names its own test database already (config/settings_test.py), the
    name the processes it starts are given; pytest-django's own suffix would differ."""


@pytest.fixture(autouse=True)
def _english_after_each_test():
    """A request in Chinese (an API call with Accept-Language: zh-hans) leaves Chinese
    active in this thread; the next test starts in English again."""
    yield
    translation.activate("en")
