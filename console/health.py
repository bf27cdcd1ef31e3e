"""Liveness and readiness probes (DESIGN.md §4.6)."""

import logging

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from console.celery import app as celery_app

log = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz(request):
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


@never_cache
@require_GET
def readyz(request):
    problems = {"database": _check_database(), "broker": _check_broker()}
    failed = {k: v for k, v in problems.items() if v}
    if failed:
        log.warning("readiness check failed: %s", failed)
        return JsonResponse({"status": "unavailable", "problems": failed}, status=503)
    return JsonResponse({"status": "ok", "checks": dict.fromkeys(problems, "ok")})
