"""How the archive's page and API word a batch: running, finished or interrupted, and
the retention setting in words."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from incidents.models import ArchiveBatch

# The archive tasks' time_limit (incidents/tasks.py): a batch unfinished for longer than
# this is no longer running; its worker died or was stopped mid-run. What it moved stays
# archived and counted; a new run archives the rest.
RUN_LIMIT = timedelta(hours=6)
# "Archive now" offers this when retention is off.
DEFAULT_DAYS = 90


class BatchState(models.TextChoices):
    RUNNING = "running", _("running")
    FINISHED = "finished", _("finished")
    INTERRUPTED = "interrupted", _("interrupted")


def batch_state(batch: ArchiveBatch, now: datetime | None = None) -> BatchState:
    if batch.finished_at is not None:
        return BatchState.FINISHED
    if (now or timezone.now()) - batch.created_at > RUN_LIMIT:
        return BatchState.INTERRUPTED
    return BatchState.RUNNING


def retention_days() -> int:
    """RETENTION_RESOLVED_DAYS; 0 when retention is off."""
    return max(int(settings.RETENTION_RESOLVED_DAYS or 0), 0)


def default_days() -> int:
    return retention_days() or DEFAULT_DAYS
