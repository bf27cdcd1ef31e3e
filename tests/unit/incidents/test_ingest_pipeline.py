"""The full path sends its statements in pipeline mode (incidents/ingest/write_postgres.py):
the two locking reads in one round trip, the writes, the timeline entries and the
receipt in another. They are still prepared once per connection, every id comes back,
and an error inside a pipeline is Django's, so a lost race is still retried.
PostgreSQL only (SQLite has no pipeline)."""

import pytest
from django.db import IntegrityError, connection, transaction

from incidents.ingest import write_postgres
from incidents.models import Alert, Incident, TimelineEvent, WebhookReceipt
from tests.payloads import alert, notification, resolved

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="pipeline mode is PostgreSQL's"),
]


def prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_pipelined_statements_are_prepared_after_a_few_deliveries(post_webhook):
    for i in range(7):  # psycopg prepares on the fifth run (DATABASE_PREPARE_THRESHOLD)
        gk = f'{{}}:{{alertname="VLLMHighTTFT", group="g{i}"}}'
        body = notification([alert(pod=f"p-{i}-{n}") for n in range(3)], group_key=gk)
        assert post_webhook(body).status_code == 200
    statements = prepared()
    assert any("FROM incidents_alert" in s and "FOR UPDATE" in s for s in statements)
    assert any("FROM incidents_incident" in s and "FOR UPDATE" in s for s in statements)
    assert any("INSERT INTO incidents_timelineevent" in s for s in statements)


def test_every_row_gets_its_id_and_the_answer_names_them(post_webhook):
    gk = '{}:{alertname="VLLMHighTTFT", group="ids"}'
    alerts = [alert(pod=f"ids-{n}") for n in range(4)]
    opened = post_webhook(notification(alerts, group_key=gk)).json()
    incident = Incident.objects.get(pk=opened["opened"][0])
    assert WebhookReceipt.objects.get(pk=opened["receipt"]).incident_ids == [incident.pk]
    assert Alert.objects.filter(incident=incident).count() == 4
    closed = post_webhook(notification([resolved(a) for a in alerts], group_key=gk)).json()
    assert closed["mitigated"] == [incident.pk]
    assert WebhookReceipt.objects.get(pk=closed["receipt"]).incident_ids == [incident.pk]
    kinds = list(TimelineEvent.objects.filter(incident=incident).values_list("kind", flat=True))
    assert "incident_opened" in kinds
    assert "alert_resolved" in kinds


def _twice_the_same_alert() -> None:
    """The receipt, then the same alert twice: the unique (fingerprint, starts_at)
    refuses the second, inside the pipeline."""
    receipt = WebhookReceipt(body="{}", body_bytes=2, http_status=200, alert_count=0)
    row = {
        "fingerprint": "ab",
        "starts_at": "2026-01-01T00:00:00+00:00",
        "alertname": "A",
        "status": "firing",
        "severity": "",
        "labels": {},
        "annotations": {},
        "ends_at": None,
        "generator_url": "",
        "grouping_key": "g",
        "incident_id": None,
        "first_received_at": "2026-01-01T00:00:00+00:00",
        "last_received_at": "2026-01-01T00:00:00+00:00",
        "receive_count": 1,
    }
    with transaction.atomic(), write_postgres.pipeline():
        write_postgres.receipt_insert(receipt)
        write_postgres.alerts_insert([row, row])


def test_an_error_inside_a_pipeline_is_djangos_and_rolls_back():
    with pytest.raises(IntegrityError):
        _twice_the_same_alert()
    assert not Alert.objects.filter(fingerprint="ab").exists()
    with connection.cursor() as cursor:  # the connection is usable again
        cursor.execute("SELECT 1")
