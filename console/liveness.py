"""Is any Celery worker alive? Writes (the worker's heartbeat), the read shared by
/readyz, the page banner and the run cards, and a registry of waiting work.

Console is the lowest layer and cannot count a higher app's queue, so higher apps
register a counter for the banner ("M action runs are waiting") in their AppConfig.ready.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Q
from django.db.models.functions import Now
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from console.errors import DomainError
from console.models import WorkerHeartbeat

# Rows of workers gone for this long are deleted (pod names change on every deploy).
FORGET_AFTER = timedelta(days=7)


def _check_hostname(hostname: str) -> None:
    if not hostname or len(hostname) > 255:
        raise DomainError("A worker heartbeat needs a hostname of 1 to 255 characters.")


@transaction.atomic
def worker_heartbeat_record(*, hostname: str, pid: int, starting: bool = False) -> None:
    """The worker `hostname` is alive now. Times come from the database's clock, which
    every web and worker process shares, so host clock skew cannot fake a live worker."""
    _check_hostname(hostname)
    fields = {"last_seen": Now(), "pid": pid, "stopped_at": None}
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


@dataclass(frozen=True)
class WorkerLiveness:
    alive: int  # workers that beat within the staleness window
    last_seen: datetime | None  # the latest heartbeat of any worker, or None: never
    stale_after: int  # seconds

    @property
    def ok(self) -> bool:
        return self.alive > 0

    @property
    def problem(self) -> str:
        """What is wrong, for a person, in the active language (the health probes read it
        in English); empty when a worker is alive."""
        if self.ok:
            return ""
        if self.last_seen is None:
            return _("No worker has been seen yet")
        seconds = max(0, int((timezone.now() - self.last_seen).total_seconds()))
        if seconds < 60:
            return ngettext(
                "No worker has been seen for %(n)s second",
                "No worker has been seen for %(n)s seconds",
                seconds,
            ) % {"n": seconds}
        minutes = seconds // 60
        return ngettext(
            "No worker has been seen for %(n)s minute",
            "No worker has been seen for %(n)s minutes",
            minutes,
        ) % {"n": minutes}


def worker_liveness_get() -> WorkerLiveness:
    """One query, whatever the number of workers."""
    stale_after = settings.WORKER_HEARTBEAT_STALE_SECONDS
    fresh = Q(stopped_at__isnull=True, last_seen__gte=Now() - timedelta(seconds=stale_after))
    row = WorkerHeartbeat.objects.aggregate(alive=Count("pk", filter=fresh), last=Max("last_seen"))
    return WorkerLiveness(alive=row["alive"], last_seen=row["last"], stale_after=stale_after)


@dataclass(frozen=True)
class WaitingWork:
    count: Callable[[], int]  # one query
    singular: str | Promise  # lazy (gettext_lazy) to be translated on the banner
    plural: str | Promise

    def describe(self) -> str:
        n = self.count()
        if n == 1:
            return _("1 %(what)s is waiting") % {"what": self.singular}
        if not n:
            return _("no %(what)s are waiting") % {"what": self.plural}
        return _("%(n)s %(what)s are waiting") % {"n": n, "what": self.plural}


_waiting_work: dict[str, WaitingWork] = {}


def waiting_work_register(
    *, count: Callable[[], int], singular: str | Promise, plural: str | Promise
) -> None:
    """Let the banner say how much work waits for a worker (idempotent by `plural`)."""
    _waiting_work[str(plural)] = WaitingWork(count=count, singular=singular, plural=plural)


def worker_banner_text(liveness: WorkerLiveness) -> str:
    """The page banner when no worker is alive, else ''. One query per registered
    counter, and none while a worker is alive."""
    if liveness.ok:
        return ""
    waiting = "; ".join(work.describe() for work in _waiting_work.values())
    if waiting:
        return _("%(problem)s; %(waiting)s.") % {"problem": liveness.problem, "waiting": waiting}
    return _("%(problem)s.") % {"problem": liveness.problem}
