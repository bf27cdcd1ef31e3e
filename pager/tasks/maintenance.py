"""Celery tasks (thin: each calls one service)."""

from celery import shared_task

from pager.maintenance import services


@shared_task(
    name="pager.tasks.maintenance.maintenance_summaries_write",
    acks_late=True,
    soft_time_limit=100,
    time_limit=120,
)
def maintenance_summaries_write() -> int:
    return services.summaries_write()
