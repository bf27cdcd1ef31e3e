"""Liveness and readiness probes.

/readyz answers 503 only for what the web process itself needs (database, broker). A
missing Celery worker is reported in its body ("status": "degraded", "checks.worker")
but keeps 200: taking every web pod out of the Service when the workers die would turn
"actions do not run" into "nobody can see the incidents and alerts are dropped".
/readyz/worker answers 503 when no worker is alive, for an alert or a worker probe.
"A worker" runs actions: a live notifier does not count. A queue nobody consumes (the
notifier gone) is named under "queues" in both, and makes /readyz/worker answer 503.

The probes answer anyone, signed in or not: a failing component is named with a fixed
text, and the driver's error (which can name hosts, ports, users, tables) goes to the
log only.
"""

import logging

from celery import current_app
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from console.liveness.selectors import WorkerLiveness, worker_liveness_get

log = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz(request: HttpRequest):
    return JsonResponse({"status": "ok"})


DATABASE_UNAVAILABLE = "database unavailable"
BROKER_UNAVAILABLE = "broker unavailable"
WORKER_UNKNOWN = "unknown"


def _failed(shown: str, exc: Exception, where: str = "") -> str:
    """The fixed text for the caller; the exception, with its detail, for the log."""
    log.warning("readiness: %s%s: %s: %s", shown, where, exc.__class__.__name__, exc)
    return shown


def _check_database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "not ready"
        return _failed(DATABASE_UNAVAILABLE, exc)
    return None


def _check_broker() -> str | None:
    try:
        # The app config/celery.py makes: Celery's Django fix-up sets it as the default
        # for every thread, so the console reaches its broker without importing config.
        with current_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        where = settings.CELERY_BROKER_URL.split("@")[-1]  # never the credentials
        return _failed(BROKER_UNAVAILABLE, exc, f" ({where})")
    return None


def _workers(liveness: WorkerLiveness) -> dict:
    return {
        "alive": liveness.alive,  # that run actions
        "last_seen": liveness.last_seen.isoformat() if liveness.last_seen else None,
        "stale_after_seconds": liveness.stale_after,
        "queues": {queue.name: queue.alive for queue in liveness.queues},
    }


def _problem(liveness: WorkerLiveness) -> str:
    with translation.override(None):  # probes and their logs read English
        return liveness.problem


def _queue_problem(liveness: WorkerLiveness) -> str:
    with translation.override(None):
        return "; ".join(liveness.queue_problems)


@never_cache
@require_GET
def readyz(request: HttpRequest):
    problems = {"database": _check_database(), "broker": _check_broker()}
    failed = {k: v for k, v in problems.items() if v}
    if failed:
        log.warning("readiness check failed: %s", failed)
        return JsonResponse({"status": "unavailable", "problems": failed}, status=503)
    checks = dict.fromkeys(problems, "ok")
    try:
        liveness = worker_liveness_get()
    except Exception as exc:  # say, migrations not applied yet: still ready to serve
        checks["worker"] = _failed(WORKER_UNKNOWN, exc)
        return JsonResponse({"status": "degraded", "checks": checks})
    checks["worker"] = _problem(liveness) or "ok"
    checks["queues"] = _queue_problem(liveness) or "ok"
    return JsonResponse(
        {
            "status": "ok" if liveness.ok and checks["queues"] == "ok" else "degraded",
            "checks": checks,
            "workers": _workers(liveness),
        }
    )


@never_cache
@require_GET
def readyz_worker(request: HttpRequest):
    """200 while at least one worker that runs actions has beaten within
    WORKER_HEARTBEAT_STALE_SECONDS, and every other queue has a live consumer."""
    try:
        liveness = worker_liveness_get()
    except Exception as exc:  # no database, no knowing
        problem = _check_database() or _failed(DATABASE_UNAVAILABLE, exc)
        return JsonResponse(
            {"status": "unavailable", "problems": {"database": problem}}, status=503
        )
    problems = {"worker": _problem(liveness), "queues": _queue_problem(liveness)}
    if any(problems.values()):
        return JsonResponse(
            {"status": "unavailable", "problems": {k: v for k, v in problems.items() if v},
             "workers": _workers(liveness)},
            status=503,
        )  # fmt: skip
    return JsonResponse({"status": "ok", "workers": _workers(liveness)})
