"""Celery tasks (thin: each calls one service). Queue: default (config/celery_routes.py)."""

from celery import shared_task

from pager.schedules import services


@shared_task(
    name="pager.tasks.schedules.ical_refresh_due",
    acks_late=True,
    # Every due calendar in turn, each bounded by PAGER_ICAL_TIMEOUT_SECONDS; beat runs
    # it every 5 minutes, so it must end before the next.
    soft_time_limit=240,
    time_limit=270,
)
def ical_refresh_due() -> int:
    return services.schedules_ical_refresh_due()


@shared_task(
    name="pager.tasks.schedules.ical_refresh",
    acks_late=True,
    soft_time_limit=60,
    time_limit=90,
)
def ical_refresh(schedule_id: int) -> str:
    """One schedule's calendar now (the schedule page's "Read again" button)."""
    return services.schedule_ical_refresh(schedule_id=schedule_id)
