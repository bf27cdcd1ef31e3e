"""The console's own health as heartbeats (kind CONSOLE), so a dead worker pool or a
dead beat pages the owning team like any other missing heartbeat:

- "worker:<queue>", one per Celery queue (console.queues.QUEUE_NAMES): fed from the
  workers' own heartbeats (console.liveness), which record the queues each consumes. A
  queue with a live consumer counts as seen at that consumer's latest beat;
- "beat": the periodic heartbeat check itself. Only beat sends it, on two queues (default
  and notifications), so it runs while beat and either worker pool live. Its liveness is
  known from the check running, and judged where beat plays no part: on every Watchdog
  delivery Alertmanager makes to the web process (`console_beat_watch`).

What cannot be paged from here: the database itself (every heartbeat lives in it). The
Prometheus rules on the console's own /metrics (deploy/prometheus/console-rules:
ConsoleMetricsAbsent, ConsoleWebhook5xx) cover it, routed to a pager outside the
console.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db.models import Q

from console.liveness.selectors import worker_liveness_get
from console.queues import QUEUE_NAMES
from pager.heartbeats.selectors import beating, overdue
from pager.models import Heartbeat, HeartbeatKind, HeartbeatState, Team

BEAT = "beat"


def queue_source(queue: str) -> str:
    return f"worker:{queue}"


def _wanted() -> dict[str, tuple[str, str]]:
    """source -> (slug, name) of every console heartbeat."""
    wanted = {
        queue_source(queue): (f"console-worker-{queue}", f"Console workers: {queue} queue")
        for queue in QUEUE_NAMES
    }
    wanted[BEAT] = ("console-beat", "Console beat: periodic checks")
    return wanted


def console_heartbeats_ensure() -> None:
    """Create the console's heartbeats that do not exist yet (two queries when they do)."""
    wanted = _wanted()
    have = set(
        Heartbeat.objects.filter(kind=HeartbeatKind.CONSOLE, source__in=wanted).values_list(
            "source", flat=True
        )
    )
    if have == set(wanted):
        return
    team = Team.objects.filter(is_default=True).first()
    # A worker's beat is stale after WORKER_HEARTBEAT_STALE_SECONDS; the check runs every
    # 30 s: each gets at least a minute, plus the grace every heartbeat has.
    interval = max(60, int(settings.WORKER_HEARTBEAT_STALE_SECONDS))
    Heartbeat.objects.bulk_create(
        [
            Heartbeat(
                slug=slug,
                name=name,
                kind=HeartbeatKind.CONSOLE,
                source=source,
                team=team,
                interval_seconds=interval,
                grace_seconds=settings.HEARTBEAT_GRACE_SECONDS,
            )
            for source, (slug, name) in wanted.items()
            if source not in have
        ],
        ignore_conflicts=True,  # a concurrent check made them first
    )


def console_health_record(*, now: datetime) -> None:
    """Feed the console heartbeats: each queue with a live worker is seen at that worker's
    latest beat, and beat (this check runs) now. One query for the workers, one UPDATE
    per live queue and one for beat."""
    console_heartbeats_ensure()
    liveness = worker_liveness_get()
    for queue in liveness.queues:
        if queue.alive and queue.last_seen is not None:
            Heartbeat.objects.filter(kind=HeartbeatKind.CONSOLE, source=queue_source(queue.name))\
                .filter(Q(last_seen_at__isnull=True) | Q(last_seen_at__lt=queue.last_seen))\
                .update(last_seen_at=queue.last_seen, state=beating())  # fmt: skip
    Heartbeat.objects.filter(kind=HeartbeatKind.CONSOLE, source=BEAT).update(
        last_seen_at=now, state=beating()
    )


def console_beat_due(*, at: datetime) -> int | None:
    """The beat heartbeat's id when it is overdue and not yet missing (one query): the
    Watchdog's receiver then runs the check for it, since beat cannot."""
    found = (
        Heartbeat.objects.filter(kind=HeartbeatKind.CONSOLE, source=BEAT, enabled=True)
        .exclude(state=HeartbeatState.MISSING)
        .first()
    )
    if found is None or not overdue(found, at):
        return None
    return found.pk
