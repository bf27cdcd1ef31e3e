"""Celery tasks for sending pages (thin: each calls one service).

Routes and beat (config/celery_routes.py): page_send on the notifications queue (beside
notifications.tasks.delivery_send: the worker that sends messages), pages_requeue on
default, every minute.
"""

from celery import shared_task

from pager.paging import services
from pager.paging.services.pages import SEND_BUDGET_SECONDS


@shared_task(
    name="pager.tasks.paging.page_send",
    # Redelivered if the worker dies: page_send finds the delivery it was sending past
    # its lease (UNKNOWN, never resent) and goes on with the next method.
    acks_late=True,
    reject_on_worker_lost=True,
    # One run stops claiming after SEND_BUDGET_SECONDS and queues the rest; the limits
    # leave room for the delivery under way (two tries of PAGER_TIMEOUT_SECONDS).
    soft_time_limit=SEND_BUDGET_SECONDS + 90,
    time_limit=SEND_BUDGET_SECONDS + 120,
)
def page_send_task(page_id: int) -> None:
    services.page_send(page_id=page_id)


@shared_task(
    name="pager.tasks.paging.pages_requeue",
    acks_late=True,
    soft_time_limit=50,
    time_limit=60,
)
def pages_requeue_task() -> int:
    return services.pages_requeue()
