"""Thin Celery tasks: take primary keys, call one service."""

from celery import shared_task
from django.contrib.auth import get_user_model

from incidents import services
from incidents.alertmanager_view import services as alertmanager_view
from incidents.archive import services as archive_services


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


@shared_task(name="incidents.tasks.retention_run", acks_late=True, time_limit=6 * 3600)
def retention_run() -> int | None:
    # A redelivered run finds what the first one archived already gone: nothing twice.
    batch = archive_services.retention_run()
    return batch.pk if batch else None


def _actor(actor_id: int | None):
    # A person removed since is no actor: the service then refuses a page's or API's run.
    return get_user_model().objects.filter(pk=actor_id).first() if actor_id else None


@shared_task(name="incidents.tasks.archive_run", acks_late=True, time_limit=6 * 3600)
def archive_run(older_than_days: int, actor_id: int | None, method: str = "page") -> int:
    # "Archive now" (incidents/archive/requests.py). Redelivered, it archives only what
    # the first run left, in a batch of its own.
    return archive_services.incidents_archive(
        older_than_days=older_than_days, actor=_actor(actor_id), method=method
    ).pk


@shared_task(name="incidents.tasks.restore_run", acks_late=True, time_limit=6 * 3600)
def restore_run(batch_id: int, actor_id: int | None, method: str = "page") -> int:
    # "Restore batch": every incident the batch still holds; redelivered, only the rest.
    return archive_services.incidents_restore(
        actor=_actor(actor_id), method=method, batch_id=batch_id
    ).incidents


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
