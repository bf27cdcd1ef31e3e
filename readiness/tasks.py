"""Thin Celery tasks for the checklist: take primary keys, call services."""

from celery import shared_task

from readiness import services


@shared_task(
    name="readiness.tasks.checklist_verify", acks_late=True, soft_time_limit=100, time_limit=120
)
def checklist_verify(verification_id: int) -> None:
    services.verification_run(verification_id=verification_id)


@shared_task(
    name="readiness.tasks.checklists_refresh", acks_late=True, soft_time_limit=280, time_limit=300
)
def checklists_refresh() -> int:
    """Beat: find the LWS in each namespace, verify each one, then prune old passes.
    Returns how many were verified."""
    done = services.checklists_refresh()
    services.verifications_prune()
    return done
