"""Test override: PostgreSQL (the production engine) whenever it is reachable.

It sits beside the settings package, not in it: importing config.settings.test would run
config/settings/__init__.py before the environment defaults below are set.

DATABASE_URL wins when set. Otherwise the local PostgreSQL on 127.0.0.1:5432 is used;
if it is down, tests fall back to SQLite and the PostgreSQL-only tests skip, unless
REQUIRE_SERVICES=1 (CI), where a missing service fails the run.
"""

import os
import socket

_PG_DEFAULT = "postgres://postgres@127.0.0.1:5432/test"


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


if "DATABASE_URL" not in os.environ:
    if _reachable("127.0.0.1", 5432):
        os.environ["DATABASE_URL"] = _PG_DEFAULT
    elif os.environ.get("REQUIRE_SERVICES") == "1":
        raise RuntimeError("REQUIRE_SERVICES=1 but PostgreSQL is not reachable on 127.0.0.1:5432")
os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production")
os.environ.setdefault("FIELD_ENCRYPTION_KEYS", "test-field-encryption-key-not-for-production")
# Every run owns its PostgreSQL test database and its Redis keys, so two checkouts (or two
# people) can run the suite on one machine at once without touching each other's data.
# `make test` runs pytest-xdist workers (each a process of its own, started with the
# controller's environment): each worker is a run of its own too, with the worker's name
# added to the controller's id, so its database, Redis keys and the processes it starts
# never meet another worker's.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER and os.environ.get("TEST_RUN_WORKER") != _WORKER:
    _run = f"{os.environ.get('TEST_RUN_ID') or os.getppid()}_{_WORKER}"
    os.environ.update(
        TEST_RUN_ID=_run,
        TEST_RUN_WORKER=_WORKER,
        CELERY_BROKER_KEY_PREFIX=f"test-{_run}:",
        TEST_DB_NAME=f"{os.environ.get('TEST_DB_NAME') or 'test_console'}_{_WORKER}"
        if os.environ.get("TEST_DB_NAME")
        else f"test_console_{_run}",
    )
TEST_RUN_ID = os.environ.setdefault("TEST_RUN_ID", str(os.getpid()))
os.environ.setdefault("CELERY_BROKER_KEY_PREFIX", f"test-{TEST_RUN_ID}:")
os.environ.setdefault("TEST_DB_NAME", f"test_console_{TEST_RUN_ID}")
os.environ.setdefault("ALERTMANAGER_TOKEN", "test-alertmanager-token")
# Nothing listens on port 9: a test that starts no Alertmanager of its own gets the
# "refused" answer, never a silence written into a developer's `make run` Alertmanager.
os.environ.setdefault("ALERTMANAGER_URL", "http://127.0.0.1:9")
# The suite (live server, browser, worker and gunicorn subprocesses, which inherit this
# environment) speaks plain HTTP to 127.0.0.1, so the production HTTPS defaults are off
# here; tests/unit/console/test_security_settings.py proves they are on in production.
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("SECURE_COOKIES", "0")

from config.settings import *  # noqa: E402,F403
from config.settings import VAR_DIR  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed only
# Links as production has them (a configured address): a test request then records no
# address (notifications/links.py); the tests of that fallback set it to "".
NOTIFY_CONSOLE_URL = "http://testserver"
# Real Redis when it runs (db 15, keys under this run's own prefix), else in-memory.
if "TEST_CELERY_BROKER_URL" in os.environ:
    CELERY_BROKER_URL = os.environ["TEST_CELERY_BROKER_URL"]
elif _reachable("127.0.0.1", 6379):
    CELERY_BROKER_URL = "redis://127.0.0.1:6379/15"
elif os.environ.get("REQUIRE_SERVICES") == "1":
    raise RuntimeError("REQUIRE_SERVICES=1 but Redis is not reachable on 127.0.0.1:6379")
else:
    CELERY_BROKER_URL = "memory://"
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {"global_keyprefix": os.environ["CELERY_BROKER_KEY_PREFIX"]}
    if CELERY_BROKER_URL.startswith("redis")
    else {}
)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
TEST_VAR_DIR = VAR_DIR / "test"
STATIC_ROOT = TEST_VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
if DATABASES["default"]["ENGINE"].endswith("postgresql"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DB_NAME"]}  # noqa: F405
