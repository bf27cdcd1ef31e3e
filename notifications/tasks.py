"""Thin Celery tasks for notifications: take primary keys, call one service."""

from celery import Task, shared_task
from django.conf import settings

from notifications import services
from notifications.transports import DeliveryError


class DeliveryTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        # Reached for what the service did not record itself: a time limit, a bug.
        if args and not isinstance(exc, DeliveryError):
            services.delivery_fail(delivery_id=args[0], error=exc)


@shared_task(
    bind=True,
    base=DeliveryTask,
    name="notifications.tasks.delivery_send",
    # Transport errors a later attempt may cure (timeouts, 5xx, a mail server away):
    # exponential backoff with full jitter, so a target that comes back is not hit by
    # every queued delivery in the same second.
    autoretry_for=(DeliveryError,),
    max_retries=settings.NOTIFY_MAX_RETRIES,
    retry_backoff=settings.NOTIFY_RETRY_BACKOFF_SECONDS,
    retry_backoff_max=settings.NOTIFY_RETRY_BACKOFF_MAX_SECONDS,
    retry_jitter=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=services.SEND_TIME_LIMIT_SECONDS - 30,
    time_limit=services.SEND_TIME_LIMIT_SECONDS,  # the claim's lease is longer
)
def delivery_send_task(self: Task, delivery_id: int) -> None:
    services.delivery_send(
        delivery_id=delivery_id, last_try=self.request.retries >= self.max_retries
    )


@shared_task(
    name="notifications.tasks.action_items_overdue_notify",
    acks_late=True,
    soft_time_limit=100,
    time_limit=120,
)
def action_items_overdue_notify_task() -> int:
    return services.action_items_overdue_notify()


@shared_task(
    name="notifications.tasks.deliveries_requeue",
    acks_late=True,
    soft_time_limit=50,
    time_limit=60,
)
def deliveries_requeue_task() -> int:
    return services.deliveries_requeue()
