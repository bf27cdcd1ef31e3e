"""Thin Celery tasks: take primary keys, call one service."""

from celery import shared_task

from incidents import services
from incidents.alertmanager_view import services as alertmanager_view


@shared_task(
    name="incidents.tasks.webhook_receipt_replay",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=3,
    soft_time_limit=60,
    time_limit=90,
)
def webhook_receipt_replay(receipt_id: int, actor_id: int | None = None) -> int:
    # Replaying is idempotent: ingestion keys alerts by (fingerprint, startsAt), so a
    # redelivered task re-applies nothing.
    return services.webhook_receipt_replay(receipt_id=receipt_id, actor_id=actor_id).pk


@shared_task(name="incidents.tasks.webhook_receipts_prune", acks_late=True, time_limit=600)
def webhook_receipts_prune() -> int:
    return services.webhook_receipts_prune()


@shared_task(
    name="incidents.tasks.alertmanager_reconcile",
    acks_late=True,
    ignore_result=True,
    soft_time_limit=60,
    time_limit=90,
)
def alertmanager_reconcile(incident_id: int | None = None) -> int:
    # Beat (every open incident) and the incident page (one); each run asks Alertmanager
    # afresh, so a redelivered or overlapping run only records the same view again.
    return alertmanager_view.alertmanager_reconcile(incident_id=incident_id).ended
