"""Ingestion's statements bind their parameters on the server and are prepared once per
connection (incidents/ingest/write_postgres.py): after a few deliveries the database
holds them as prepared statements, while the ORM's queries elsewhere stay client-bound.
PostgreSQL only (SQLite has no such thing)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from incidents.models import Incident
from tests.payloads import alert, notification

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's"
    ),
]


def prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_the_webhooks_statements_are_prepared_and_the_orms_are_not(post_webhook):
    body = notification([alert(pod=f"p-{i}") for i in range(3)])
    for _ in range(7):  # psycopg prepares on the fifth run (DATABASE_PREPARE_THRESHOLD)
        assert post_webhook(body).status_code == 200
        Incident.objects.filter(status="triggered").count()
    statements = prepared()
    assert any("incidents_repeat_apply" in s for s in statements), statements
    assert any("INSERT INTO incidents_webhookreceipt" in s for s in statements), statements
    assert not any('"incidents_incident"' in s and "COUNT" in s for s in statements)


def test_a_prepared_statement_is_still_logged_with_its_text(post_webhook):
    """Django asks psycopg for the text it sent, which psycopg keeps none of for a prepared
    statement: tests and DEBUG logs would see None."""
    body = notification([alert(pod="logged")])
    for _ in range(6):
        post_webhook(body)
    with CaptureQueriesContext(connection) as ctx:
        assert post_webhook(body).status_code == 200
    texts = [q["sql"] for q in ctx.captured_queries]
    assert all(isinstance(t, str) and t for t in texts), texts
    assert any("incidents_repeat_apply" in t for t in texts), texts
