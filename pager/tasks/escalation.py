"""Celery tasks (thin: each calls one service). All idempotent: an escalation's row lock
and its pages' unique keys make a redelivered or duplicated task a no-op."""

from celery import shared_task

from pager.escalation import services

# A tick advances at most services.TICK_BATCH escalations; a start or an advance runs a
# few steps. The limits stop a stuck one (a database that hangs) from holding a slot.
SOFT_LIMIT, HARD_LIMIT = 50, 60


@shared_task(
    name="pager.tasks.escalation.tick", acks_late=True, soft_time_limit=SOFT_LIMIT,
    time_limit=HARD_LIMIT,
)  # fmt: skip
def tick() -> int:
    return services.escalations_tick()


@shared_task(
    name="pager.tasks.escalation.start", acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT,
)  # fmt: skip
def start(incident_id: int) -> int | None:
    escalation = services.escalation_start(incident_id=incident_id)
    return escalation.pk if escalation is not None else None


@shared_task(
    name="pager.tasks.escalation.advance", acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT,
)  # fmt: skip
def advance(escalation_id: int) -> list[int]:
    return services.escalation_advance(escalation_id=escalation_id)


@shared_task(
    name="pager.tasks.escalation.acknowledge", acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT,
)  # fmt: skip
def acknowledge(incident_id: int, actor_id: int | None) -> None:
    services.escalation_on_ack(incident_id=incident_id, actor_id=actor_id)


@shared_task(
    name="pager.tasks.escalation.stop", acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT,
)  # fmt: skip
def stop(incident_id: int, reason: str) -> None:
    services.escalation_stop(incident_id=incident_id, reason=reason)
