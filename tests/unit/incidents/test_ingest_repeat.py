"""Ingestion at the database's speed (issue #14): an unchanged repeat is one statement with
its receipt, and changes exactly what the full path would; concurrent deliveries of one
group still make one incident."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incidents.ingest import write_postgres
from incidents.ingest.apply import alerts_ingest
from incidents.ingest.parse import ReceiptMeta, parse_payload
from incidents.models import Alert, Incident, TimelineEvent, WebhookReceipt
from tests.payloads import BASE, alert, notification, resolved

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the repeat fast path is PostgreSQL's"
    ),
]
GROUPS = ('{}:{lws="vllm-chat"}', '{}:{lws="vllm-long"}')


def ingest(body: dict) -> dict:
    result = alerts_ingest(payload=parse_payload(body), meta=ReceiptMeta(body="{}", body_bytes=2))
    return result.as_response()


def statements(ctx: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]]


def test_an_unchanged_repeat_is_one_statement_with_its_receipt(post_webhook):
    body = notification([alert(pod=f"p{i}") for i in range(50)])
    post_webhook(body)
    incident = Incident.objects.get()
    events = TimelineEvent.objects.count()
    with CaptureQueriesContext(connection) as ctx:
        r = post_webhook(body)
    assert r.status_code == 200
    assert r.json()["incidents"] == []
    assert r.json()["received"] == 50
    assert len(statements(ctx)) == 1, statements(ctx)
    receipt = WebhookReceipt.objects.latest("id")
    assert r.json()["receipt"] == receipt.pk
    assert WebhookReceipt.objects.count() == 2, "one receipt per body, not one per attempt"
    assert receipt.alert_count == 50
    assert receipt.incident_ids == []
    # Every column as the full path's receipt stores it (the statement casts each value).
    assert json.loads(receipt.body) == body
    assert receipt.body_bytes == len(receipt.body.encode())
    assert (receipt.outcome, receipt.http_status, receipt.source) == (
        "accepted",
        200,
        "alertmanager",
    )
    assert receipt.remote_addr == "127.0.0.1"
    assert receipt.group_key == body["groupKey"]
    # What the full path did for a re-send: receive bookkeeping, nothing a person sees.
    assert set(Alert.objects.values_list("receive_count", flat=True)) == {2}
    assert set(Alert.objects.values_list("last_received_at", flat=True)) == {receipt.received_at}
    assert TimelineEvent.objects.count() == events
    after = Incident.objects.get()
    assert after.updated_at == incident.updated_at
    assert after.last_notified_at == receipt.received_at


def test_a_changed_notification_takes_the_full_path_and_a_repeat_of_it_the_fast_one(
    post_webhook,
):
    alerts = [alert(pod=f"p{i}") for i in range(3)]
    post_webhook(notification(alerts))
    post_webhook(notification([resolved(alerts[0]), *alerts[1:]]))
    assert Alert.objects.filter(status="resolved").count() == 1
    with CaptureQueriesContext(connection) as ctx:
        post_webhook(notification([resolved(alerts[0]), *alerts[1:]]))
    assert len(statements(ctx)) == 1
    assert WebhookReceipt.objects.count() == 3
    assert sorted(Alert.objects.values_list("receive_count", flat=True)) == [3, 3, 3]


def test_a_repeat_raises_a_severity_lowered_since_as_the_full_path_does(post_webhook):
    body = notification([alert(severity="critical")])
    post_webhook(body)
    Incident.objects.update(severity="SEV3")
    post_webhook(body)
    incident = Incident.objects.get()
    assert incident.severity == "SEV1"
    assert TimelineEvent.objects.filter(kind="severity_changed").count() == 1


def test_a_repeat_adopts_an_orphan_that_arrived_meanwhile(post_webhook):
    """An orphan of the group can appear while its incident opens (a delivery racing
    the one that opened it); the next notification adopts it, repeat or not."""
    body = notification([alert(pod="p0")])
    post_webhook(body)
    incident = Incident.objects.get()
    now = timezone.now()
    orphan = Alert.objects.create(
        fingerprint="00000000000000aa", starts_at=BASE, alertname="VLLMHighTTFT",
        status="resolved", labels={"alertname": "VLLMHighTTFT", "pod": "late"},
        ends_at=BASE + timedelta(minutes=1), grouping_key=incident.grouping_key,
        first_received_at=now, last_received_at=now,
    )  # fmt: skip
    post_webhook(body)
    orphan.refresh_from_db()
    assert orphan.incident_id == incident.pk


def test_an_alert_another_group_wrote_voids_the_digest(post_webhook):
    """Routes with `continue: true` send one alert under two groupKeys: the second group's
    notification changes the first incident's alert, so the first group's repeat must
    go the full way again."""
    a = alert(pod="p0")
    post_webhook(notification([a], group_key=GROUPS[0]))
    first = Incident.objects.get()
    assert first.alert_digest
    post_webhook(notification([resolved(a)], group_key=GROUPS[1]))
    first.refresh_from_db()
    assert first.alert_digest == ""


# Deliveries: (group, [(alert index, status)]), or a re-send of the last body sent.
delivery = st.one_of(
    st.tuples(
        st.integers(0, len(GROUPS) - 1),
        st.lists(
            st.tuples(st.integers(0, 3), st.sampled_from(["firing", "resolved"])),
            min_size=1,
            max_size=4,
        ),
    ),
    st.just("again"),
)


class _Rollback(Exception):
    pass


def run(deliveries, *, fast: bool, monkeypatch) -> tuple:
    """Ingest in order, with or without the fast path, inside a savepoint; return what a
    person could see; roll back."""
    if not fast:
        monkeypatch.setattr(write_postgres, "repeat_apply", lambda **kw: None)
    state, last = None, None
    try:
        with transaction.atomic():
            for item in deliveries:
                if item != "again":
                    group, items = item
                    parts = []
                    for i, status in items:
                        a = alert(pod=f"g{group}-{i}", starts_at=BASE + timedelta(seconds=i))
                        parts.append(resolved(a) if status == "resolved" else a)
                    last = notification(parts, group_key=GROUPS[group])
                if last is not None:
                    ingest(last)
            state = seen()
            raise _Rollback
    except _Rollback:
        pass
    finally:
        monkeypatch.undo()
    return state


def seen() -> tuple:
    keys = dict(Incident.objects.values_list("id", "grouping_key"))
    return (
        sorted(Incident.objects.values_list("grouping_key", "status", "severity", "reopen_count")),
        sorted(
            (a.labels["pod"], a.status, a.ends_at, keys.get(a.incident_id), a.receive_count)
            for a in Alert.objects.all()
        ),
        sorted(TimelineEvent.objects.values_list("incident__grouping_key", "kind", "message")),
        sorted(
            (r.alert_count, sorted(keys[i] for i in r.incident_ids))
            for r in WebhookReceipt.objects.all()
        ),
    )


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(deliveries=st.lists(delivery, min_size=1, max_size=8))
def test_the_fast_path_changes_what_the_full_path_would(deliveries, monkeypatch):
    assert run(deliveries, fast=True, monkeypatch=monkeypatch) == run(
        deliveries, fast=False, monkeypatch=monkeypatch
    )


def test_the_receipt_body_is_compressed_with_lz4_where_the_server_can():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        if not cursor.fetchone()[0]:
            pytest.skip("this PostgreSQL was built without lz4")
        cursor.execute(
            "SELECT attcompression FROM pg_attribute "
            "WHERE attrelid = 'incidents_webhookreceipt'::regclass AND attname = 'body'"
        )
        assert cursor.fetchone()[0] == "l"


# --- concurrency ------------------------------------------------------------------------
def race(bodies: list[dict]) -> list[object]:
    """Ingest each body on its own thread and connection, all released at once."""
    barrier = threading.Barrier(len(bodies))
    outcomes: list[object] = [None] * len(bodies)

    def work(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            outcomes[i] = ingest(bodies[i])
        except Exception as exc:  # reported below, with the others
            outcomes[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_one_incident_per_group_when_its_first_notifications_race():
    body = notification([alert(pod=f"p{i}") for i in range(50)])
    outcomes = race([body] * 4)
    assert all(isinstance(o, dict) for o in outcomes), outcomes
    assert Incident.objects.count() == 1
    assert Alert.objects.count() == 50
    assert set(Alert.objects.values_list("receive_count", flat=True)) == {4}
    assert WebhookReceipt.objects.count() == 4
    assert sum(len(o["opened"]) for o in outcomes) == 1


@pytest.mark.django_db(transaction=True)
def test_repeats_racing_a_resolution_end_resolved():
    """One Alertmanager sends a group once at a time, but a retry can overlap the next
    notification, and replicas in HA send the same group at once: repeats (fast path:
    incident, then alerts) and a resolution (full path: alerts, then incident) lock in
    opposite orders; a deadlock is retried."""
    alerts = [alert(pod=f"p{i}") for i in range(20)]
    body = notification(alerts)
    ingest(body)
    outcomes = race([body, notification([resolved(a) for a in alerts]), body, body])
    assert all(isinstance(o, dict) for o in outcomes), outcomes
    assert set(Alert.objects.values_list("status", flat=True)) == {"resolved"}
    assert Incident.objects.get().status == "mitigated"
    assert WebhookReceipt.objects.count() == 5
