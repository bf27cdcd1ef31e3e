"""Queue an archive run or a batch restore on the worker: the page's and the API's
"Archive now" and "Restore batch". A run can move hundreds of thousands of incidents,
far longer than a request may take. The permission and the input are checked here, so a
refusal answers at once; the worker's run checks the permission again as its actor.

Restoring named incidents is quick (at most RESTORE_MAX, in chunks) and is not queued:
the pages and the API call `services.incidents_restore` directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import uuid4

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.permissions import require
from incidents import tasks
from incidents.archive.services import ARCHIVE_PERM, MIN_DAYS, RESTORE_PERM
from incidents.models import ArchiveBatch, IncidentArchive

# A hundred years: past it the cutoff would be before any incident (and a date overflows).
MAX_DAYS = 36_500


@dataclass(frozen=True)
class Queued:
    task: str  # the Celery task's name
    task_id: str


def check_days(days: int) -> None:
    if not MIN_DAYS <= days <= MAX_DAYS:
        raise DomainError(
            gettext_noop(
                "Archive incidents resolved at least %(min)s and at most %(max)s days ago; "
                "%(days)s is outside that (Alertmanager may still re-send recent alerts)."
            ),
            code="invalid",
            params={"min": MIN_DAYS, "max": MAX_DAYS, "days": days},
        )


def _queue(task: Any, *args: Any) -> Queued:
    # The id is chosen here so that the answer can name the task before it is sent,
    # which happens only once the request's transaction commits.
    task_id = str(uuid4())
    transaction.on_commit(lambda: task.apply_async(args=args, task_id=task_id))
    return Queued(task=task.name, task_id=task_id)


def incidents_archive_request(*, older_than_days: int, actor: User, method: str) -> Queued:
    """Queue `tasks.archive_run`: archive the incidents resolved more than
    `older_than_days` ago, as `actor`."""
    require(actor, ARCHIVE_PERM, gettext_lazy("archive incidents"))
    check_days(older_than_days)
    return _queue(tasks.archive_run, older_than_days, actor.pk, method)


def incidents_restore_request(*, batch_id: int, actor: User, method: str) -> Queued:
    """Queue `tasks.restore_run`: bring back every incident still archived in the batch."""
    require(actor, RESTORE_PERM, gettext_lazy("restore archived incidents"))
    if not ArchiveBatch.objects.filter(pk=batch_id).exists():
        raise DomainError(
            gettext_noop("There is no archive batch %(batch)s."),
            code="not_found",
            params={"batch": batch_id},
        )
    if not IncidentArchive.objects.filter(batch_id=batch_id).exists():
        raise DomainError(
            gettext_noop("Every incident of archive batch %(batch)s is restored already."),
            code="unchanged",
            params={"batch": batch_id},
        )
    return _queue(tasks.restore_run, batch_id, actor.pk, method)
