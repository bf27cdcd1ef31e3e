"""The beat task for overdue action items: one notification per item and overdue period
(a new due date that passes again is a new period), open items only, by the rules."""

from datetime import date, timedelta

import pytest
from django.utils import timezone

from notifications import services, tasks
from notifications.models import Delivery, Event
from postmortems.models import ActionItem
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
