"""The webhook skips Django's per-request health check (a SELECT 1 before the first
statement): a connection the database dropped costs one 503, which Alertmanager retries,
and the next delivery lands on a new connection. PostgreSQL only."""

import time

import psycopg
import pytest
from django.db import connection

from incidents.models import Alert
from tests.payloads import alert, notification


def _terminate(pid: int) -> None:
    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"] or "127.0.0.1", port=s["PORT"] or 5432, user=s["USER"] or "postgres",
        dbname=s["NAME"], autocommit=True, connect_timeout=5,
    ) as other:  # fmt: skip
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 10
        while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, "the backend did not go"
            time.sleep(0.05)  # poll interval


@pytest.mark.skipif(connection.vendor != "postgresql", reason="kills a PostgreSQL backend")
@pytest.mark.django_db(transaction=True)
def test_a_dropped_connection_is_one_503_and_the_next_delivery_lands(post_webhook):
    assert connection.settings_dict["CONN_HEALTH_CHECKS"], "as production; the webhook opts out"
    assert post_webhook(notification([alert(pod="before")])).status_code == 200
    _terminate(connection.connection.info.backend_pid)

    r = post_webhook(notification([alert(pod="after")]))
    assert r.status_code == 503, r.content
    assert "Alertmanager will retry" in r.json()["error"]
    # What Django's handler does as every request ends (the test client leaves it out).
    connection.close_if_unusable_or_obsolete()

    r = post_webhook(notification([alert(pod="after")]))  # Alertmanager's retry
    assert r.status_code == 200, r.content
    assert sorted(Alert.objects.values_list("labels__pod", flat=True)) == ["after", "before"]
