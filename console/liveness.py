"""Is a Celery worker alive to run actions? Writes (the worker's heartbeat, with the
queues it consumes), the read shared by /readyz, the page banner and the run cards, and
a registry of waiting work.

"A worker" is one that consumes the queue action runs go to: the notifier (queue
"notifications" only) beats too, and must not make a dead actions worker look alive.
Every other queue is reported on its own when workers of its own serve it.

Console is the lowest layer and cannot count a higher app's queue, so higher apps
register a counter for the banner ("M action runs are waiting") in their AppConfig.ready.
"""

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Aggregate, Count, Max, Q
from django.db.models.functions import Now
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from config.celery_routes import QUEUES, TASK_ROUTES
from console.errors import DomainError
from console.models import WorkerHeartbeat

# The queue a worker must consume to count as "a worker" (the one action runs go to).
ACTIONS_QUEUE = TASK_ROUTES["runbooks.tasks.action_run_execute"]["queue"]

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


@dataclass(frozen=True)
class QueueLiveness:
    name: str
    alive: int  # workers consuming it that beat within the staleness window
    last_seen: datetime | None  # the latest heartbeat of one of them, or None: never
    own_workers: bool  # served by workers that do not run actions (the notifier)

    def problem(self) -> str:
        """Nobody consumes this queue, in the active language; empty when somebody does."""
        if self.alive:
            return ""
        if self.last_seen is None:
            return _("No worker for the %(queue)s queue has been seen yet") % {"queue": self.name}
        seconds = max(0, int((timezone.now() - self.last_seen).total_seconds()))
        if seconds < 60:
            return ngettext(
                "No worker for the %(queue)s queue has been seen for %(n)s second",
                "No worker for the %(queue)s queue has been seen for %(n)s seconds",
                seconds,
            ) % {"queue": self.name, "n": seconds}
        minutes = seconds // 60
        return ngettext(
            "No worker for the %(queue)s queue has been seen for %(n)s minute",
            "No worker for the %(queue)s queue has been seen for %(n)s minutes",
            minutes,
        ) % {"queue": self.name, "n": minutes}


@dataclass(frozen=True)
class WorkerLiveness:
    alive: int  # workers that run actions and beat within the staleness window
    last_seen: datetime | None  # the latest heartbeat of such a worker, or None: never
    stale_after: int  # seconds
    queues: tuple[QueueLiveness, ...] = ()  # every declared queue, in QUEUES order

    @property
    def ok(self) -> bool:
        return self.alive > 0

    @property
    def queue_problems(self) -> list[str]:
        """The other queues nobody consumes. A queue is named when workers of its own
        serve it (the notifier), or while the actions workers are alive: when one worker
        takes every queue, its silence is the one `problem`, not one more per queue."""
        return [
            queue.problem()
            for queue in self.queues
            if queue.name != ACTIONS_QUEUE and not queue.alive and (queue.own_workers or self.ok)
        ]

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


def _consumes(queue: str) -> Q:
    # "" is a row of a worker from before queues were recorded: it consumed them all.
    return Q(queues="") | Q(queues__regex=rf"(^|,){re.escape(queue)}(,|$)")


def worker_liveness_get() -> WorkerLiveness:
    """One query, whatever the number of workers and queues."""
    stale_after = settings.WORKER_HEARTBEAT_STALE_SECONDS
    fresh = Q(stopped_at__isnull=True, last_seen__gte=Now() - timedelta(seconds=stale_after))
    names = [q.name for q in QUEUES]
    aggregates: dict[str, Aggregate] = {}
    for i, name in enumerate(names):
        aggregates[f"alive_{i}"] = Count("pk", filter=fresh & _consumes(name))
        aggregates[f"last_{i}"] = Max("last_seen", filter=_consumes(name))
        aggregates[f"own_{i}"] = Count("pk", filter=_consumes(name) & ~_consumes(ACTIONS_QUEUE))
    row = WorkerHeartbeat.objects.aggregate(**aggregates)
    queues = tuple(
        QueueLiveness(
            name=name,
            alive=row[f"alive_{i}"],
            last_seen=row[f"last_{i}"],
            own_workers=row[f"own_{i}"] > 0,
        )
        for i, name in enumerate(names)
    )
    (actions,) = [q for q in queues if q.name == ACTIONS_QUEUE]
    return WorkerLiveness(
        alive=actions.alive, last_seen=actions.last_seen, stale_after=stale_after, queues=queues
    )


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
    """The page banner when no worker is alive or a queue has nobody (the notifier is
    gone: notifications wait), else ''. One query per registered counter, and none while
    a worker is alive."""
    if liveness.ok:
        problems = liveness.queue_problems
        return _("%(problem)s.") % {"problem": "; ".join(problems)} if problems else ""
    waiting = "; ".join(work.describe() for work in _waiting_work.values())
    if waiting:
        return _("%(problem)s; %(waiting)s.") % {"problem": liveness.problem, "waiting": waiting}
    return _("%(problem)s.") % {"problem": liveness.problem}
