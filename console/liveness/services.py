"""The worker heartbeat's writes: each worker records that it is alive, with the queues
it consumes, so the actions worker and the notifier are told apart (selectors.py)."""

import re
from collections.abc import Collection
from datetime import timedelta

from django.db import transaction
from django.db.models.functions import Now

from console.errors import DomainError
from console.models import WorkerHeartbeat

# Rows of workers gone for this long are deleted (pod names change on every deploy).
FORGET_AFTER = timedelta(days=7)


def _check_hostname(hostname: str) -> None:
    if not hostname or len(hostname) > 255:
        raise DomainError("A worker heartbeat needs a hostname of 1 to 255 characters.")


def _queues_field(queues: Collection[str] | None) -> str:
    if queues is None:
        return ""
    value = ",".join(sorted(set(queues)))
    if not value or len(value) > 255 or not re.fullmatch(r"[\w.:-]+(,[\w.:-]+)*", value):
        raise DomainError(
            "A worker heartbeat needs the names of the queues the worker consumes "
            "(letters, digits, '_', '.', ':', '-'; 255 characters in all)."
        )
    return value


@transaction.atomic
def worker_heartbeat_record(
    *, hostname: str, pid: int, starting: bool = False, queues: Collection[str] | None = None
) -> None:
    """The worker `hostname`, consuming `queues` (None: not told, taken as every queue),
    is alive now. Times come from the database's clock, which every web and worker
    process shares, so host clock skew cannot fake a live worker."""
    _check_hostname(hostname)
    fields = {"last_seen": Now(), "pid": pid, "stopped_at": None, "queues": _queues_field(queues)}
    if starting:
        fields["started_at"] = Now()
        WorkerHeartbeat.objects.filter(last_seen__lt=Now() - FORGET_AFTER).delete()
    if not WorkerHeartbeat.objects.filter(hostname=hostname).update(**fields):
        WorkerHeartbeat.objects.create(hostname=hostname, **{"started_at": Now(), **fields})


@transaction.atomic
def worker_heartbeat_stop(*, hostname: str) -> None:
    """The worker shut down cleanly: it stops counting at once, not a minute later."""
    _check_hostname(hostname)
    WorkerHeartbeat.objects.filter(hostname=hostname).update(last_seen=Now(), stopped_at=Now())
