"""Stage 1, receive: POST /api/v1/alerts/alertmanager, the HTTP view. The token, the
body (whole, never more than WEBHOOK_MAX_BYTES, with or without Content-Length), what
its receipt keeps, then parse (stage 2) and alerts_ingest (stages 3 to 6), and the answer.

Answer codes are chosen for Alertmanager's retry rules: it retries 5xx and transport
errors and drops everything else. So: 400/401/413 only for requests that can never
succeed (and a 400's body is kept), 503 only for transient database trouble (down,
failing over, a race that outlasted the retries), never 429.

Django reads a request without Content-Length as empty, so a chunked body
(Transfer-Encoding: chunked) would be rejected as "not JSON" although it was sent in
full. gunicorn decodes chunked framing itself and says so with `wsgi.input_terminated`;
Django's development server does not decode it, so we do it here from the socket.
"""

import hmac
import ipaddress
import logging
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import LimitedStream
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
from incidents.ingest.apply import alerts_ingest
from incidents.ingest.parse import PayloadError, ReceiptMeta, parse_body
from incidents.models import ReceiptOutcome
from incidents.services.receipts import webhook_receipt_record

log = logging.getLogger("incidents.webhook")  # the name docs/security.md tells operators
# Which configured token a delivery presented, as its log line says.
CURRENT, PREVIOUS = "current", "previous"
_READ_SIZE = 64 * 1024
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,8}")
_MAX_TRAILER_LINES = 32


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


# --- the body -------------------------------------------------------------------------
class BodyTooLarge(Exception):
    pass


class BodyUnreadable(Exception):
    """The framing is broken, or this server gives us no way to read the body;
    `partial` holds what was read, for the receipt."""

    def __init__(self, message: str, partial: bytes = b"") -> None:
        super().__init__(message)
        self.partial = partial


def read_body(request: HttpRequest, limit: int) -> bytes:
    """The whole body, or BodyTooLarge past `limit`, or BodyUnreadable."""
    meta = request.META
    chunked = "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower()
    if not chunked:
        declared = meta.get("CONTENT_LENGTH") or "0"
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge
        try:
            raw = request.body
        except RequestDataTooBig:
            raise BodyTooLarge from None
        if len(raw) > limit:
            raise BodyTooLarge
        return raw
    stream = meta["wsgi.input"]
    if meta.get("wsgi.input_terminated"):  # gunicorn: decoded, ends at the body's end
        return _read_to_end(stream.read, limit)
    if type(stream) is LimitedStream and getattr(stream, "_readline", None):
        # Django's development server hands us the socket capped at Content-Length (0).
        # The raw socket readers, which LimitedStream keeps private (checked just above).
        return _dechunk(stream._read, stream._readline, limit)  # type: ignore[attr-defined]
    raise BodyUnreadable("this server cannot read a chunked body; send Content-Length instead")


def _read_to_end(read: Callable[[int], bytes], limit: int) -> bytes:
    out = bytearray()
    while True:
        data = read(_READ_SIZE)
        if not data:
            return bytes(out)
        out += data
        if len(out) > limit:
            raise BodyTooLarge


def _dechunk(read: Callable[[int], bytes], readline: Callable[[int], bytes], limit: int) -> bytes:
    """RFC 9112 §7.1 chunked decoding, refusing a body above `limit` as soon as its
    chunk sizes say so (before reading the data)."""
    out = bytearray()
    while True:
        line = readline(1024)
        size_text = line.split(b";", 1)[0].strip()
        if not line.endswith(b"\n") or not _CHUNK_SIZE.fullmatch(size_text):
            raise BodyUnreadable(f"malformed chunk size line {line[:40]!r}", bytes(out))
        size = int(size_text, 16)
        if size == 0:
            break
        if len(out) + size > limit:
            raise BodyTooLarge
        data = read(size)
        if len(data) != size or read(2) != b"\r\n":
            raise BodyUnreadable("a chunk ended early or lacks its CRLF", bytes(out + data))
        out += data
    for _ in range(_MAX_TRAILER_LINES):
        if readline(1024) in (b"\r\n", b"\n", b""):
            return bytes(out)
    raise BodyUnreadable("too many trailer lines after the last chunk", bytes(out))


# --- the answer -----------------------------------------------------------------------
def _error(status: int, message: str, **extra: Any) -> JsonResponse:
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
def alertmanager_webhook(request: HttpRequest) -> JsonResponse:
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
