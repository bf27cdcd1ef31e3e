"""A failing target, a broker that is down, or a broken notifications app never fails
the webhook: ingest answers 200, the incident is stored, and the failure is recorded
where the Notifications page shows it."""

import pytest
from kombu.exceptions import OperationalError

from incidents.models import Incident
from notifications import tasks
from notifications.models import Delivery, DeliveryStatus
from tests.payloads import alert, notification
from tests.unit.notifications.conftest import send

pytestmark = pytest.mark.django_db


def test_broker_down_ingest_answers_200_and_the_delivery_waits(
    post_webhook,
    webhook_target,
    make_rule,
    monkeypatch,
    django_capture_on_commit_callbacks,
    settings,
):
    make_rule(webhook_target)

    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.delivery_send_task, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_webhook(notification([alert()]))
    assert response.status_code == 200
    assert response.json()["opened"] == [Incident.objects.get().pk]
    (delivery,) = Delivery.objects.all()
    assert delivery.status == DeliveryStatus.PENDING
    assert "Could not queue it for the worker" in delivery.last_error
    assert "Connection refused" in delivery.last_error
    # The broker is back: beat's requeue hands it over.
    queued = []
    monkeypatch.setattr(
        tasks.delivery_send_task, "apply_async", lambda args, **kw: queued.append(args[0])
    )
    settings.NOTIFY_REQUEUE_AFTER_SECONDS = 0
    assert tasks.deliveries_requeue_task.apply().get() == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error, queued) == (
        DeliveryStatus.QUEUED,
        "",
        [delivery.pk],
    )


def test_target_down_ingest_answers_200_and_the_failure_is_recorded(
    post_webhook, webhook_target, make_rule, receiver, queued, django_capture_on_commit_callbacks
):
    make_rule(webhook_target)
    receiver.close()  # the target is down
    with django_capture_on_commit_callbacks(execute=True):
        assert post_webhook(notification([alert()])).status_code == 200
    (delivery,) = Delivery.objects.all()
    send(delivery.pk)  # on the worker, later
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert "Could not reach" in delivery.last_error


def test_a_broken_notifications_app_does_not_fail_ingest(
    post_webhook, webhook_target, make_rule, monkeypatch, django_capture_on_commit_callbacks
):
    make_rule(webhook_target)

    def broken(**kwargs):
        raise RuntimeError("bug in notifications")

    monkeypatch.setattr("notifications.services.deliveries.deliveries_record", broken)
    with django_capture_on_commit_callbacks(execute=True):
        assert post_webhook(notification([alert()])).status_code == 200
    assert Incident.objects.count() == 1
