"""The beat task for overdue action items, the one overdue pipeline: for the rules'
targets one notification per item and overdue period (a new due date that passes again
is a new period), open items only, by the rules; in the console's inbox one notice per
item and person (owner, creator) a day; on the reminder webhook one post a day listing
them (a real HTTP server)."""

import json
import logging
from datetime import date, timedelta

import pytest
from django.utils import timezone

from notifications import services, tasks
from notifications.models import Delivery, Event
from postmortems import services as postmortems_services
from postmortems.models import ActionItem, Notification
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

TODAY = date(2026, 6, 10)


@pytest.fixture
def item(people):
    incident = IncidentFactory(severity="SEV2", namespace="llm-prod")
    return ActionItem.objects.create(
        title="Alert on NCCL watchdog timeouts", due_date=TODAY - timedelta(days=3),
        category="monitoring", incident=incident, namespace="llm-prod", owner=people["rita"],
        created_by=people["cara"], created_at=timezone.now(),
    )  # fmt: skip


def test_once_per_item_and_overdue_period(item, webhook_target, make_rule, queued):
    make_rule(webhook_target, events=["action_item_overdue"])
    assert services.action_items_overdue_notify(today=TODAY) == 1
    assert services.action_items_overdue_notify(today=TODAY) == 0  # the next hourly run
    assert services.action_items_overdue_notify(today=TODAY + timedelta(days=1)) == 0
    (delivery,) = Delivery.objects.all()
    assert delivery.event == Event.ACTION_ITEM_OVERDUE
    assert delivery.event_key == f"overdue:{item.pk}:{item.due_date.isoformat()}"
    assert delivery.summary == (
        f"Action item #{item.pk} is 3 days overdue: Alert on NCCL watchdog timeouts "
        f"(incident #{item.incident_id}, owner rita)"
    )
    assert delivery.body["details"]["due_date"] == "2026-06-07"
    assert delivery.body["url"].endswith(f"/postmortems/items/?item={item.pk}")
    # The owner moves the due date; when that one passes too, it is news again.
    ActionItem.objects.filter(pk=item.pk).update(due_date=TODAY + timedelta(days=5))
    assert services.action_items_overdue_notify(today=TODAY + timedelta(days=1)) == 0
    assert services.action_items_overdue_notify(today=TODAY + timedelta(days=6)) == 1
    assert Delivery.objects.count() == 2
    assert queued == list(Delivery.objects.order_by("id").values_list("pk", flat=True))


def test_done_items_and_items_not_yet_due_are_left_alone(item, webhook_target, make_rule, queued):
    make_rule(webhook_target)
    assert services.action_items_overdue_notify(today=item.due_date) == 0  # due today: not late
    ActionItem.objects.filter(pk=item.pk).update(status="done")
    assert services.action_items_overdue_notify(today=TODAY) == 0
    assert not Delivery.objects.exists()


def test_rules_apply_to_the_items_incident(item, webhook_target, make_rule, queued):
    make_rule(webhook_target, severities=["SEV1"])
    assert services.action_items_overdue_notify(today=TODAY) == 0
    make_rule(webhook_target, name="prod", namespaces="llm-*")
    assert services.action_items_overdue_notify(today=TODAY) == 1


def test_the_beat_task_runs_the_service(item, webhook_target, make_rule, queued):
    make_rule(webhook_target)
    assert tasks.action_items_overdue_notify_task.apply().get() == 1


@pytest.fixture
def reminder_webhook(receiver, settings):
    settings.POSTMORTEM_REMINDER_WEBHOOK_URL = f"{receiver.url}/hook"
    return receiver


def test_the_inbox_hears_once_a_day_and_the_reminder_webhook_gets_one_post(
    people, reminder_webhook
):
    incident = IncidentFactory(status="resolved", severity="SEV2", runbook="nccl-hang")
    late = postmortems_services.action_item_create(
        incident_id=incident.pk, actor=people["rita"],
        values={"title": "Add NVLink alerts", "owner": "cara", "due_date": "2026-01-05"},
    )  # fmt: skip
    postmortems_services.action_item_create(
        incident_id=incident.pk, actor=people["rita"],
        values={"title": "Not due yet", "due_date": "2099-01-01"},
    )  # fmt: skip
    today = date(2026, 1, 10)
    services.action_items_overdue_notify(today=today)
    services.action_items_overdue_notify(today=today)  # same day: once
    notes = Notification.objects.filter(kind="overdue")
    assert sorted(n.user.username for n in notes) == ["cara", "rita"]  # owner + creator
    note = notes.get(user=people["cara"])
    assert "Overdue 5 d: Add NVLink alerts" in note.message
    assert note.link == f"/postmortems/items/?item={late.pk}"
    (post,) = reminder_webhook.received
    text = json.loads(post.body)["text"]
    assert text.startswith("1 overdue action item(s):\n")
    assert "Add NVLink alerts" in text
    assert "owner cara" in text
    assert "Not due yet" not in text
    late.refresh_from_db()
    assert late.last_reminded_on == today
    # The next day is a new reminder, in the inbox and on the webhook.
    services.action_items_overdue_notify(today=today + timedelta(days=1))
    assert Notification.objects.filter(kind="overdue").count() == 4
    assert len(reminder_webhook.received) == 2


def test_a_refused_reminder_webhook_is_logged_not_raised(item, people, settings, caplog):
    # Loopback without OUTGOING_URL_ALLOWLIST: the guard refuses it before connecting.
    settings.POSTMORTEM_REMINDER_WEBHOOK_URL = "http://127.0.0.1:9/services/T0/B0/secret"
    with caplog.at_level(logging.WARNING, logger="notifications.services.overdue"):
        assert services.action_items_overdue_notify(today=TODAY) == 0  # no rules
    assert Notification.objects.filter(kind="overdue").count() == 2
    (record,) = caplog.records
    assert "reminder webhook at 127.0.0.1 failed" in record.getMessage()
    assert "secret" not in record.getMessage()  # the path is a credential
