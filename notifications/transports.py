"""Sending one delivery's body to its target: Slack through apprise, the generic webhook
signed here and posted with requests, email through Django's mail. Slack and webhook
calls go through console/outgoing: the address guard and an overall deadline.

Each raises DeliveryError with a message a person can act on (a text of
notifications/services/errors.py: stored as parts, worded in the reader's language);
`retry` says whether trying again later can help (a timeout or a 5xx can, a 404 or a
refused signature cannot).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import smtplib
import time
from typing import Any
from urllib.parse import urlencode

import apprise
import requests
from django.conf import settings
from django.core.mail import send_mail

from console.outgoing import (
    DeadlineExceeded,
    OutgoingRefused,
    check_url_form,
    deadline,
    failure_reason,
    guarded,
    user_request,
)
from console.texts import Msg, msg
from notifications.messages import email_text, slack_text
from notifications.models import Target, TargetKind, split_list
from notifications.services.errors import refused

SIGNATURE_HEADER = "X-Console-Signature"
TIMESTAMP_HEADER = "X-Console-Timestamp"
EVENT_HEADER = "X-Console-Event"
DELIVERY_HEADER = "X-Console-Delivery"
USER_AGENT = "vllm-incident-console-notifications/1"
RETRY_STATUSES = {408, 425, 429, 500, 502, 503, 504}


class DeliveryError(Exception):
    """`said`: the text as parts (None for a plain string); `message`: its English."""

    def __init__(self, message: str | Msg, retry: bool = False) -> None:
        said = message if isinstance(message, Msg) else None
        english = said.english if said is not None else str(message)
        # Both in args, as plain values: Celery may pickle or serialise it for a retry.
        super().__init__(english, retry)
        self.message, self.retry, self.said = english, retry, said

    def __str__(self) -> str:
        return self.message


def deliver(target: Target, body: dict[str, Any], *, delivery_id: int) -> None:
    if target.kind == TargetKind.SLACK:
        _slack(target, body)
    elif target.kind == TargetKind.WEBHOOK:
        _webhook(target, body, delivery_id=delivery_id)
    elif target.kind == TargetKind.EMAIL:
        _email(target, body)
    else:
        raise DeliveryError(msg("notifications.error.unknown_kind", kind=target.kind))


# --- Slack (apprise) ---------------------------------------------------------------------
def _slack(target: Target, body: dict[str, Any]) -> None:
    timeout = settings.NOTIFY_TIMEOUT_SECONDS
    # format=text: apprise escapes Slack's control characters in the text; its markdown
    # mode would let "<!channel>" from an alert label through. No apprise footer or icon.
    params = urlencode(
        {"format": "text", "footer": "no", "image": "no", "cto": timeout, "rto": timeout}
    )
    url = f"{target.url.split('?', 1)[0]}?{params}"
    notifier = apprise.Apprise()
    if not notifier.add(url):
        raise DeliveryError(msg("notifications.error.slack_url"), retry=False)
    try:
        check_url_form(target.url)
        # apprise opens its own connections: the guard checks each address as it is
        # connected (the host is Slack's, Target.clean makes sure), and the deadline
        # bounds the whole exchange, which apprise's per-read timeouts do not.
        with (
            apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as captured,
            deadline(timeout),
            guarded() as guard,
        ):
            ok = notifier.notify(
                title=body["summary"], body=slack_text(body), body_format=apprise.NotifyFormat.TEXT
            )
    except OutgoingRefused as exc:
        raise DeliveryError(refused(exc), retry=False) from None
    except DeadlineExceeded:
        raise DeliveryError(_timeout(target, timeout), retry=True) from None
    if guard.refused is not None:  # apprise swallowed the refusal: report it
        raise DeliveryError(refused(guard.refused), retry=False)
    if not ok:
        said = " ".join(captured.getvalue().split())[:500]
        detail = said or msg("notifications.error.no_reason")
        # apprise reports a failure without its HTTP status as a value, so every Slack
        # failure is retried: the retries are bounded and a revoked URL fails in minutes.
        raise DeliveryError(msg("notifications.error.slack_refused", detail=detail), retry=True)


def _timeout(target: Target, timeout: float) -> Msg:
    return msg(
        "notifications.error.timeout", destination=target.destination, seconds=f"{timeout:g}"
    )


# --- generic webhook (signed here, sent with requests) -----------------------------------
def signature(secret: str, timestamp: str, raw_body: bytes) -> str:
    """HMAC-SHA256 over "<timestamp>.<body>": signing the timestamp with the body means a
    captured request cannot be replayed later under a fresh timestamp."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def _webhook(target: Target, body: dict[str, Any], *, delivery_id: int) -> None:
    # apprise's json:// plugin cannot sign a body, so this one target is posted with
    # requests (already the runtime HTTP client) and the exact bytes that were signed.
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_HEADER: str(body.get("event", "")),
        DELIVERY_HEADER: str(delivery_id),
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: signature(target.secret, timestamp, raw),
    }
    timeout = settings.NOTIFY_TIMEOUT_SECONDS
    try:
        # No redirects: requests would turn the POST into a GET and drop the body.
        response = user_request(
            "POST", target.url, data=raw, headers=headers, deadline=timeout, allow_redirects=False
        )
    except OutgoingRefused as exc:  # the target's URL reaches an internal address
        raise DeliveryError(refused(exc), retry=False) from None
    except requests.Timeout:
        raise DeliveryError(_timeout(target, timeout), retry=True) from None
    except requests.RequestException as exc:
        said = msg(
            "notifications.error.unreachable",
            destination=target.destination,
            detail=failure_reason(exc),
        )
        raise DeliveryError(said, retry=True) from None
    if 200 <= response.status_code < 300:
        return
    # The answer's body is not repeated: the error is shown to commanders, and the URL
    # could be a service that was never meant to answer them.
    status = response.status_code
    message = msg("notifications.error.http_status", destination=target.destination, status=status)
    if status in RETRY_STATUSES:
        raise DeliveryError(message, retry=True)
    if 300 <= status < 400:
        message += msg("notifications.error.redirect")
    elif status in (401, 403):
        message += msg("notifications.error.secret")
    raise DeliveryError(message, retry=False)


# --- email (Django's mail) ----------------------------------------------------------------
def _email(target: Target, body: dict[str, Any]) -> None:
    # Django's send_mail rather than apprise's mailto://: apprise speaks SMTP itself, so
    # it would need a second SMTP configuration and could not use Django's backends (the
    # console backend under `make run`, the test outbox); EMAIL_* configure it once.
    recipients = split_list(target.recipients)
    try:
        send_mail(
            subject=body["summary"],
            message=email_text(body),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=recipients,
            fail_silently=False,
        )
    except smtplib.SMTPRecipientsRefused as exc:
        said = msg("notifications.error.mail_refused", recipients=", ".join(exc.recipients))
        raise DeliveryError(said, retry=False) from None
    except (smtplib.SMTPException, OSError) as exc:
        said = msg(
            "notifications.error.mail_failed",
            host=settings.EMAIL_HOST,
            port=settings.EMAIL_PORT,
            detail=str(exc),  # the mail server's or the socket's own words
        )
        raise DeliveryError(said, retry=True) from None
