"""Celery tasks (thin: each calls one service)."""

from celery import shared_task

from pager.heartbeats import services


@shared_task(
    name="pager.tasks.heartbeats.heartbeats_check",
    acks_late=True,
    # Beat sends it every 30 s on two queues; a run that outlives the next is cut short
    # (each heartbeat is its own transaction: what was done stays done).
    soft_time_limit=50,
    time_limit=60,
)
def heartbeats_check() -> int:
    return services.heartbeats_check()
