"""Alertmanager replicas in HA deliver the same notification at the same moment (issue 23,
finding 9). The worst interleaving, forced rather than hoped for: replica A's delivery
has applied its changes and holds its transaction open; replica B's identical delivery
(another externalURL) runs meanwhile, as far as the database lets it, on its own
connection, through the real webhook view. Then A commits. The console must keep one
timeline entry per change and one outgoing notification per transition, and answer
both 200. The real-binary version is tests/integration/test_alertmanager_ha.py."""

import json
import threading
from collections import Counter

import pytest
from django.db import connection, connections
from django.test import Client

from incidents.ingest import apply
from incidents.models import Alert, Incident, TimelineEvent, WebhookReceipt
from notifications import tasks
from notifications.models import Delivery, Rule, Target, TargetKind
from tests.conftest import TOKEN
from tests.helpers import wait_for
from tests.payloads import alert, notification, resolved

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's"),
]
ALERTS = [alert(pod=f"vllm-chat-{i}") for i in range(3)]


@pytest.fixture
def target(monkeypatch):
    """A target told about incidents opening and being mitigated; queueing is recorded
    here (the broker is the worker's business, tested in tests/integration)."""
    monkeypatch.setattr(tasks.delivery_send_task, "apply_async", lambda *a, **kw: None)
    found = Target.objects.create(
        name="ops", kind=TargetKind.WEBHOOK, url="http://127.0.0.1:9/hook", secret="s3cret"
    )
    rule = Rule.objects.create(name="incidents", events=["incident_opened", "incident_mitigated"])
    rule.targets.set([found])
    return found


def from_replica(body: dict, n: int) -> dict:
    return {**body, "externalURL": f"http://alertmanager-{n}:9093"}


def _backend_waits_on_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def deliver_interleaved(body: dict, monkeypatch) -> tuple[list[object], bool]:
    """Replica A's delivery applied but not committed while replica B's identical one
    runs until it waits on A's locks (or finishes); then A commits. Both answers, and
    whether B was seen waiting on A."""
    applied, release = threading.Event(), threading.Event()
    pids: dict[str, int] = {}
    full_path = apply.notification_apply

    def held_open(*args, **kwargs):
        full_path(*args, **kwargs)
        if threading.current_thread().name == "replica-0" and not applied.is_set():
            applied.set()  # only A's first attempt is held: it must be the one B meets
            assert release.wait(timeout=20)

    monkeypatch.setattr(apply, "notification_apply", held_open)
    answers: list[object] = [None, None]

    def post(n: int) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pids[threading.current_thread().name] = cursor.fetchone()[0]
            answers[n] = Client().post(
                "/api/v1/alerts/alertmanager",
                data=json.dumps(from_replica(body, n)),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {TOKEN}",
            )
        except Exception as exc:  # reported with the other answer
            answers[n] = exc
        finally:
            connections.close_all()

    a = threading.Thread(target=post, args=(0,), name="replica-0")
    b = threading.Thread(target=post, args=(1,), name="replica-1")
    a.start()
    assert applied.wait(timeout=20), answers
    b.start()

    def b_waits() -> bool:
        return "replica-1" in pids and _backend_waits_on_lock(pids["replica-1"])

    wait_for(lambda: b_waits() or not b.is_alive(), timeout=20,
             what="replica B's delivery to wait on replica A's locks")  # fmt: skip
    waited = b_waits()  # else B ran to its end without meeting A: no interleaving
    release.set()
    a.join(timeout=30)
    b.join(timeout=30)
    assert not a.is_alive()
    assert not b.is_alive()
    return answers, waited


def kinds() -> list[str]:
    return list(TimelineEvent.objects.order_by("pk").values_list("kind", flat=True))


def deliveries(target: Target) -> Counter:
    return Counter(Delivery.objects.filter(target=target).values_list("event", flat=True))


def test_two_replicas_opening_one_incident_at_once(monkeypatch, target):
    answers, waited = deliver_interleaved(notification(ALERTS), monkeypatch)

    assert [getattr(r, "status_code", r) for r in answers] == [200, 200], answers
    a, b = (r.json() for r in answers)
    assert len(a["opened"]) == 1
    assert b["opened"] == []
    assert Incident.objects.count() == 1
    assert set(Alert.objects.values_list("receive_count", flat=True)) == {2}
    assert kinds() == ["incident_opened", "alert_fired"]
    assert deliveries(target) == Counter({"incident_opened": 1})
    assert WebhookReceipt.objects.filter(http_status=200).count() == 2
    assert waited  # B met A's uncommitted incident: the interleaving happened


def test_two_replicas_resolving_one_incident_at_once(post_webhook, monkeypatch, target):
    assert post_webhook(notification(ALERTS)).status_code == 200
    answers, waited = deliver_interleaved(notification([resolved(x) for x in ALERTS]), monkeypatch)

    assert [getattr(r, "status_code", r) for r in answers] == [200, 200], answers
    a, b = (r.json() for r in answers)
    assert len(a["mitigated"]) == 1
    assert b["mitigated"] == []
    assert Incident.objects.get().status == "mitigated"
    assert kinds() == ["incident_opened", "alert_fired", "alert_resolved", "status_changed"]
    assert deliveries(target) == Counter({"incident_opened": 1, "incident_mitigated": 1})
    assert WebhookReceipt.objects.filter(http_status=200).count() == 3
    assert waited  # B met A's locked alerts


def test_a_replica_adding_an_alert_while_another_delivers_the_same(
    post_webhook, monkeypatch, target
):
    """The group is open; a new pod fires and both replicas carry it: listed once."""
    assert post_webhook(notification(ALERTS[:2])).status_code == 200
    answers, waited = deliver_interleaved(notification(ALERTS), monkeypatch)

    assert [getattr(r, "status_code", r) for r in answers] == [200, 200], answers
    assert kinds() == ["incident_opened", "alert_fired", "alert_fired"]
    last = TimelineEvent.objects.order_by("pk").last()
    assert [x["pod"] for x in last.payload["alerts"]] == ["vllm-chat-2"]
    assert Alert.objects.count() == 3
    assert deliveries(target) == Counter({"incident_opened": 1})
    assert waited
