"""Is a Celery worker alive to run actions? The read shared by /readyz, the page banner,
the run cards and /metrics.

"A worker" is one that consumes the queue action runs go to (console.queues.ACTIONS):
the notifier (queue "notifications" only) beats too, and must not make a dead actions
worker look alive. Every other queue is reported on its own when workers of its own
serve it.
"""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Aggregate, Count, Max, Q
from django.db.models.functions import Now
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from console.models import WorkerHeartbeat
from console.queues import ACTIONS, QUEUE_NAMES


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
    queues: tuple[QueueLiveness, ...] = ()  # every declared queue, in QUEUE_NAMES order

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
            if queue.name != ACTIONS and not queue.alive and (queue.own_workers or self.ok)
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
    stale_after: int = settings.WORKER_HEARTBEAT_STALE_SECONDS
    fresh = Q(stopped_at__isnull=True, last_seen__gte=Now() - timedelta(seconds=stale_after))
    aggregates: dict[str, Aggregate] = {}
    for i, name in enumerate(QUEUE_NAMES):
        aggregates[f"alive_{i}"] = Count("pk", filter=fresh & _consumes(name))
        aggregates[f"last_{i}"] = Max("last_seen", filter=_consumes(name))
        aggregates[f"own_{i}"] = Count("pk", filter=_consumes(name) & ~_consumes(ACTIONS))
    row = WorkerHeartbeat.objects.aggregate(**aggregates)
    queues = tuple(
        QueueLiveness(
            name=name,
            alive=row[f"alive_{i}"],
            last_seen=row[f"last_{i}"],
            own_workers=row[f"own_{i}"] > 0,
        )
        for i, name in enumerate(QUEUE_NAMES)
    )
    (actions,) = [q for q in queues if q.name == ACTIONS]
    return WorkerLiveness(
        alive=actions.alive, last_seen=actions.last_seen, stale_after=stale_after, queues=queues
    )
