"""Every write of the notifications app: deliveries (deliveries.py: recorded from
timeline events, queued, sent, retried, given up) and the overdue action-item pipeline
(overdue.py: targets, the console's inbox and the reminder webhook)."""

from notifications.services.deliveries import (
    SEND_LEASE,
    SEND_TIME_LIMIT_SECONDS,
    deliveries_enqueue,
    deliveries_record,
    deliveries_requeue,
    delivery_fail,
    delivery_retry,
    delivery_send,
    delivery_test,
    timeline_events_notify,
)
from notifications.services.overdue import action_items_overdue_notify

__all__ = [
    "SEND_LEASE",
    "SEND_TIME_LIMIT_SECONDS",
    "action_items_overdue_notify",
    "deliveries_enqueue",
    "deliveries_record",
    "deliveries_requeue",
    "delivery_fail",
    "delivery_retry",
    "delivery_send",
    "delivery_test",
    "timeline_events_notify",
]
