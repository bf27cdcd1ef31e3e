"""POST /api/v1/alerts/alertmanager (DESIGN.md §4.1).

Answer codes are chosen for Alertmanager's retry rules: it retries 5xx and transport
errors and drops everything else. So: 400/401/413 only for requests that can never
succeed (and the body is kept), 503 when we cannot store anything, never 429.
"""

import hmac
import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from incidents.alertmanager import PayloadError, parse_body
from incidents.models import ReceiptOutcome
from incidents.services import alerts_ingest, webhook_receipt_record
from incidents.services.ingestion import ReceiptMeta

log = logging.getLogger(__name__)


def _token_ok(request) -> bool:
    expected = settings.ALERTMANAGER_TOKEN
    header = request.headers.get("Authorization", "")
    scheme, _, presented = header.partition(" ")
    if not expected or scheme.lower() != "bearer":
        return False
    # Constant time, and on bytes so non-ASCII input cannot raise.
    return hmac.compare_digest(presented.strip().encode(), expected.encode())


def _error(status: int, message: str, **extra) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def _meta(request, body: str, size: int) -> ReceiptMeta:
    return ReceiptMeta(
        body=body,
        body_bytes=size,
        remote_addr=request.META.get("REMOTE_ADDR") or None,
        user_agent=request.headers.get("User-Agent", ""),
    )


@csrf_exempt  # machine-to-machine, authenticated by the bearer token, no cookies
@never_cache
@require_POST
def alertmanager_webhook(request):
    if not _token_ok(request):
        return _error(401, "missing or wrong bearer token (see ALERTMANAGER_TOKEN)")
    limit = settings.WEBHOOK_MAX_BYTES
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if declared.isdigit() and int(declared) > limit:
        return _error(413, f"body is larger than {limit} bytes; lower max_alerts")
    try:
        raw = request.body
    except RequestDataTooBig:
        return _error(413, f"body is larger than {limit} bytes; lower max_alerts")
    if len(raw) > limit:
        return _error(413, f"body is larger than {limit} bytes; lower max_alerts")
    text = raw.decode("utf-8", errors="replace")
    meta = _meta(request, text, len(raw))
    try:
        payload = parse_body(raw)
    except PayloadError as exc:
        try:
            receipt = webhook_receipt_record(
                meta=meta,
                outcome=ReceiptOutcome.REJECTED,
                http_status=400,
                error=exc.message,
                error_field=exc.field,
            )
        except (OperationalError, InterfaceError):
            log.exception("database unavailable while dead-lettering a bad webhook body")
            return _error(503, "database unavailable; retry later")
        return _error(400, str(exc), field=exc.field, receipt=receipt.pk)
    try:
        result = alerts_ingest(payload=payload, meta=meta)
    except (OperationalError, InterfaceError):
        log.exception("database unavailable during ingestion")
        return _error(503, "database unavailable; Alertmanager will retry")
    except DatabaseError:
        log.exception("ingestion failed")
        _record_failure(meta, "database error during ingestion")
        return _error(503, "could not store the alerts; Alertmanager will retry")
    log.info(
        "webhook: %s alerts, incidents %s (opened %s, mitigated %s)",
        result.received,
        result.incidents,
        result.opened,
        result.mitigated,
    )
    return JsonResponse(result.as_response(), status=200, json_dumps_params={"indent": None})


def _record_failure(meta: ReceiptMeta, message: str) -> None:
    try:
        webhook_receipt_record(
            meta=meta, outcome=ReceiptOutcome.FAILED, http_status=503, error=message
        )
    except DatabaseError:
        log.exception("could not record the failed webhook body")
