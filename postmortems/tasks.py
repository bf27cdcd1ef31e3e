"""Thin Celery tasks for postmortems: take primary keys, call one service."""

from celery import shared_task

from postmortems import services


@shared_task(
    name="postmortems.tasks.postmortem_draft",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=240,
    time_limit=300,
)
def postmortem_draft_task(postmortem_id: int) -> None:
    # Redelivery is harmless: a draft that is ready is left as it is.
    services.postmortem_draft_build(postmortem_id=postmortem_id)
