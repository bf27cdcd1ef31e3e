"""POST /api/v1/alerts/alertmanager.

Answer codes are chosen for Alertmanager's retry rules: it retries 5xx and transport
errors and drops everything else. So: 400/401/413 only for requests that can never
succeed (and a 400's body is kept), 503 only for transient database trouble (down,
failing over, a race that outlasted the retries), never 429.
"""

import hmac
import ipaddress
import logging

from django.conf import settings
from django.db import (
    DatabaseError,
    DataError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    connection,
)
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from console.metrics.series import webhook_observed
from incidents.alertmanager import PayloadError, parse_body
from incidents.models import ReceiptOutcome
from incidents.services import alerts_ingest, webhook_receipt_record
from incidents.services.ingestion import ReceiptMeta
from incidents.webhook_body import BodyTooLarge, BodyUnreadable, read_body

log = logging.getLogger(__name__)
# Which configured token a delivery presented, as its log line says.
CURRENT, PREVIOUS = "current", "previous"


def _token_used(request: HttpRequest) -> str | None:
    """Which configured token the bearer token is: "current" (ALERTMANAGER_TOKEN),
    "previous" (ALERTMANAGER_TOKEN_PREVIOUS, during a rotation), or None."""
    current = settings.ALERTMANAGER_TOKEN
    header = request.headers.get("Authorization", "")
    scheme, _, presented = header.partition(" ")
    if not current or scheme.lower() != "bearer":  # no token configured: refuse everyone
        return None
    given = presented.strip().encode()  # bytes, so non-ASCII input cannot raise
    # Both compared every time, each in constant time, before either result is looked
    # at: the answer's timing does not say which one matched. An empty token matches
    # nothing (`&` with its truth), not even an empty header.
    matches = [
        hmac.compare_digest(given, token.encode()) & bool(token)
        for token in (current, settings.ALERTMANAGER_TOKEN_PREVIOUS)
    ]
    if matches[0]:
        return CURRENT
    return PREVIOUS if matches[1] else None


def _error(status: int, message: str, **extra) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def _meta(request: HttpRequest, raw: bytes) -> ReceiptMeta:
    addr = request.META.get("REMOTE_ADDR") or ""
    try:
        ipaddress.ip_address(addr)
    except ValueError:  # a unix socket or a proxy's odd value: the column holds IPs only
        addr = None
    return ReceiptMeta.for_bytes(
        raw,
        remote_addr=addr,
        user_agent=request.headers.get("User-Agent", "").replace("\x00", ""),
    )


@csrf_exempt  # machine-to-machine, authenticated by the bearer token, no cookies
@never_cache
@webhook_observed  # outcome and ingest latency (console/metrics/series.py)
def alertmanager_webhook(request: HttpRequest):
    if request.method != "POST":  # JSON like every other answer (require_POST's is empty)
        response = _error(405, f"only POST is allowed, not {(request.method or '')[:10]}")
        response["Allow"] = "POST"
        return response
    token = _token_used(request)
    if token is None:
        return _error(401, "missing or wrong bearer token (see ALERTMANAGER_TOKEN)")
    if token == PREVIOUS:  # until this stops appearing, the rotation is not finished
        log.warning(
            "webhook authenticated with ALERTMANAGER_TOKEN_PREVIOUS from %s; send the "
            "current token, then empty ALERTMANAGER_TOKEN_PREVIOUS",
            request.META.get("REMOTE_ADDR") or "?",
        )
    limit = settings.WEBHOOK_MAX_BYTES
    try:
        raw = read_body(request, limit)
    except BodyTooLarge:
        return _error(413, f"body is larger than {limit} bytes; lower max_alerts")
    except BodyUnreadable as exc:
        message = f"could not read the body: {exc}"
        return _reject(_meta(request, exc.partial), message, "body", message)
    meta = _meta(request, raw)
    # No SELECT 1 before this request's first statement (CONN_HEALTH_CHECKS): a connection
    # the database dropped fails the ingest with OperationalError, answered 503, which
    # Alertmanager retries, and Django closes the broken connection as the request ends.
    # A round trip saved on every delivery.
    connection.health_check_done = True  # type: ignore[attr-defined]  # not in django-stubs
    try:
        payload = parse_body(raw)
    except PayloadError as exc:
        return _reject(meta, exc.message, exc.field, str(exc))
    try:
        result = alerts_ingest(payload=payload, meta=meta)
    except (OperationalError, InterfaceError):
        log.exception("database unavailable during ingestion")
        return _error(503, "database unavailable; Alertmanager will retry")
    except IntegrityError:
        # Concurrent deliveries kept winning the same rows: transient, worth a retry.
        log.exception("ingestion lost every retry to concurrent deliveries")
        _record_failure(meta, "concurrent deliveries kept conflicting", 503)
        return _error(503, "could not store the alerts; Alertmanager will retry")
    except DataError as exc:
        # The database refuses a value in this body: it can never succeed.
        log.warning("webhook body refused by the database: %s", exc)
        return _reject(meta, f"the database refused a value: {exc}", "body", str(exc))
    except DatabaseError:
        log.exception("ingestion failed")
        _record_failure(meta, "database error during ingestion", 500)
        return _error(500, "internal error while storing the alerts")
    log.info(
        "webhook: %s alerts, incidents %s (opened %s, mitigated %s), %s token",
        result.received,
        result.incidents,
        result.opened,
        result.mitigated,
        token,
        extra={"token": token},
    )
    return JsonResponse(result.as_response(), status=200, json_dumps_params={"indent": None})


def _reject(meta: ReceiptMeta, message: str, field: str, shown: str) -> JsonResponse:
    """400 for a body that can never succeed, kept as a dead letter."""
    try:
        receipt = webhook_receipt_record(
            meta=meta,
            outcome=ReceiptOutcome.REJECTED,
            http_status=400,
            error=message,
            error_field=field,
        )
    except (OperationalError, InterfaceError):
        log.exception("database unavailable while dead-lettering a bad webhook body")
        return _error(503, "database unavailable; retry later")
    return _error(400, shown, field=field, receipt=receipt.pk)


def _record_failure(meta: ReceiptMeta, message: str, status: int) -> None:
    try:
        webhook_receipt_record(
            meta=meta, outcome=ReceiptOutcome.FAILED, http_status=status, error=message
        )
    except DatabaseError:
        log.exception("could not record the failed webhook body")
