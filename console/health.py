"""Liveness and readiness probes.

/readyz answers 503 only for what the web process itself needs (database, broker). A
missing Celery worker is reported in its body ("status": "degraded", "checks.worker")
but keeps 200: taking every web pod out of the Service when the workers die would turn
"actions do not run" into "nobody can see the incidents and alerts are dropped".
/readyz/worker answers 503 when no worker is alive, for an alert or a worker probe.
"""

import logging

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from console.celery import app as celery_app
from console.liveness import WorkerLiveness, worker_liveness_get

log = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz(request: HttpRequest):
    return JsonResponse({"status": "ok"})


def _check_database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "not ready"
        return f"database unreachable: {exc.__class__.__name__}: {exc}"
    return None


def _check_broker() -> str | None:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return f"broker {settings.CELERY_BROKER_URL.split('@')[-1]} unreachable: {exc}"
    return None


def _workers(liveness: WorkerLiveness) -> dict:
    return {
        "alive": liveness.alive,
        "last_seen": liveness.last_seen.isoformat() if liveness.last_seen else None,
        "stale_after_seconds": liveness.stale_after,
    }


def _problem(liveness: WorkerLiveness) -> str:
    with translation.override(None):  # probes and their logs read English
        return liveness.problem


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
        checks["worker"] = f"unknown: {exc.__class__.__name__}: {exc}"
        return JsonResponse({"status": "degraded", "checks": checks})
    checks["worker"] = _problem(liveness) or "ok"
    return JsonResponse(
        {
            "status": "ok" if liveness.ok else "degraded",
            "checks": checks,
            "workers": _workers(liveness),
        }
    )


@never_cache
@require_GET
def readyz_worker(request: HttpRequest):
    """200 while at least one worker has beaten within WORKER_HEARTBEAT_STALE_SECONDS."""
    try:
        liveness = worker_liveness_get()
    except Exception as exc:  # no database, no knowing
        return JsonResponse(
            {"status": "unavailable", "problems": {"database": _check_database() or str(exc)}},
            status=503,
        )
    if not liveness.ok:
        return JsonResponse(
            {"status": "unavailable", "problems": {"worker": _problem(liveness)},
             "workers": _workers(liveness)},
            status=503,
        )  # fmt: skip
    return JsonResponse({"status": "ok", "workers": _workers(liveness)})
