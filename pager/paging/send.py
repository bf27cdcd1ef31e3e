"""Sending one message through one contact method, within PAGER_TIMEOUT_SECONDS in all:
apprise for push, SMS, voice, Telegram and Slack, Django's mail for email, a signed
POST for a webhook. Every connection goes through console/outgoing: the address guard
(apprise and the webhook reach addresses a user typed) and the overall deadline (an
SMTP socket is registered with the same deadline).

Failures raise SendError with a message a person can act on. It names the method by
`address_masked` (scheme and host), never the URL (it holds tokens) and never an answer's
body. `transient` says whether the same method may work a moment later (a timeout, HTTP
5xx, 429, 408; an SMTP 4xx): the caller tries it once more before falling through.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import smtplib
import time

import apprise
import requests
from django.conf import settings
from django.core.mail import EmailMessage, get_connection

from console.outgoing import (
    DeadlineExceeded,
    OutgoingRefused,
    deadline,
    failure_reason,
    guarded,
    user_request,
)
from notifications.transports import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    RETRY_STATUSES,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    signature,
)
from pager.models import ContactKind
from pager.paging.messages import PageText
from pager.paging.methods import (
    APPRISE_KINDS,
    KIND_WORDS,
    address_masked,
    apprise_url,
    webhook_parts,
)

K = ContactKind
USER_AGENT = "vllm-incident-console-pager/1"
# apprise's warnings end with "error=<HTTP status>." when a service answered with one.
_APPRISE_STATUS = re.compile(r"error=(\d{3})\b")
_STATUS_ADVICE = {
    400: "it refused the message's form; check the address (topic, chat id, user)",
    401: "check the token or password in the address",
    403: "check the token or password in the address, and that it may post there",
    404: "check the topic, chat, user or path in the address",
    413: "the message was too large for it",
    429: "it is rate limiting the console",
}


class SendError(Exception):
    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message, transient)
        self.message, self.transient = message, transient

    def __str__(self) -> str:
        return self.message


def send(kind: str, address: str, text: PageText, *, ref: str) -> None:
    """Send `text` through one method; SendError when it did not go out. `ref` names the
    delivery for the receiver (a webhook's X-Console-Delivery header)."""
    timeout = float(settings.PAGER_TIMEOUT_SECONDS)
    if kind in APPRISE_KINDS:
        _apprise(kind, address, text, timeout)
    elif kind == K.EMAIL:
        _email(address, text, timeout)
    elif kind == K.WEBHOOK:
        _webhook(address, text, timeout, ref=ref)
    else:
        raise SendError(f"Unknown contact method kind {kind!r}.")


def _late(shown: str, timeout: float) -> SendError:
    return SendError(f"{shown} did not answer within {timeout:g} s.", transient=True)


def _status_error(shown: str, status: int) -> SendError:
    message = f"{shown} answered HTTP {status}"
    advice = _STATUS_ADVICE.get(status)
    if status >= 500:
        advice = "the service failed; it may be down"
    return SendError(
        f"{message}: {advice}." if advice else f"{message}.",
        transient=status in RETRY_STATUSES or status >= 500,
    )


# --- apprise ---------------------------------------------------------------------------------
def _apprise(kind: str, address: str, text: PageText, timeout: float) -> None:
    shown = f"{KIND_WORDS[kind]} ({address_masked(kind, address)})"
    notifier = apprise.Apprise()
    if not notifier.add(apprise_url(kind, address, timeout=timeout)):
        raise SendError(f"apprise cannot read the address of {shown}; edit the contact method.")
    title, body = text.title, text.text
    if kind == K.SMS:
        title, body = "", text.short
    elif kind == K.VOICE:
        title, body = "", text.spoken
    try:
        # apprise opens its own connections: the guard checks each address as it is
        # connected, the deadline bounds the whole exchange (apprise's timeouts are per
        # read). Its warnings are kept here for the HTTP status only: they can name a
        # topic or a chat, which are secrets of a kind.
        with (
            apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as captured,
            deadline(timeout),
            guarded() as guard,
        ):
            ok = notifier.notify(title=title, body=body, body_format=apprise.NotifyFormat.TEXT)
    except OutgoingRefused as exc:
        raise SendError(f"{shown}: {exc}") from None
    except DeadlineExceeded:
        raise _late(shown, timeout) from None
    if guard.refused is not None:  # apprise swallowed the refusal
        raise SendError(f"{shown}: {guard.refused}")
    if ok:
        return
    found = _APPRISE_STATUS.findall(captured.getvalue())
    if found:
        raise _status_error(shown, int(found[-1]))
    raise SendError(
        f"{shown} did not take the message (no answer, or one apprise could not read); "
        "check the address and that the worker can reach the service, then use Test."
    )


# --- email -----------------------------------------------------------------------------------
def _email(address: str, text: PageText, timeout: float) -> None:
    # Django's mail, as notifications does: EMAIL_* configure it once, and the test and
    # `make run` backends work. The SMTP socket is not urllib3's, so it is registered
    # with the deadline here; smtplib's own timeout bounds the connect.
    server = f"{settings.EMAIL_HOST}:{settings.EMAIL_PORT}"
    shown = address_masked(K.EMAIL, address)
    try:
        with deadline(timeout) as block:
            connection = get_connection(fail_silently=False, timeout=timeout)
            try:
                connection.open()
                sock = getattr(getattr(connection, "connection", None), "sock", None)
                if sock is not None and not block.register(sock):
                    raise TimeoutError("the call's deadline has passed")
                EmailMessage(
                    subject=text.title,
                    body=text.text,
                    from_email=settings.DEFAULT_FROM_EMAIL,
                    to=[address],
                    connection=connection,
                ).send()
            finally:
                # A connection the deadline cut fails its QUIT too; the first error counts.
                with contextlib.suppress(smtplib.SMTPException, OSError):
                    connection.close()
    except smtplib.SMTPRecipientsRefused:
        raise SendError(f"The mail server ({server}) refused {shown}; check the address.") from None
    except DeadlineExceeded:
        raise SendError(
            f"The mail server ({server}) did not finish within {timeout:g} s.", transient=True
        ) from None
    except smtplib.SMTPResponseException as exc:
        raise SendError(
            f"The mail server ({server}) answered {exc.smtp_code}; check EMAIL_HOST, "
            "EMAIL_PORT and the credentials.",
            transient=400 <= exc.smtp_code < 500,  # 4xx: try again later, by definition
        ) from None
    except TimeoutError:
        raise SendError(
            f"The mail server ({server}) did not answer within {timeout:g} s.", transient=True
        ) from None
    except (smtplib.SMTPException, OSError) as exc:
        raise SendError(
            f"Could not send mail through {server}: {failure_reason(exc)}. Check EMAIL_HOST, "
            "EMAIL_PORT and the credentials."
        ) from None


# --- webhook ---------------------------------------------------------------------------------
def _webhook(address: str, text: PageText, timeout: float, *, ref: str) -> None:
    shown = address_masked(K.WEBHOOK, address)
    try:
        url, secret = webhook_parts(address)
    except Exception:  # whatever is wrong, the address is: say so, not what
        raise SendError(
            f"The webhook address ({shown}) is not valid; edit the contact method."
        ) from None
    raw = json.dumps(text.data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    stamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_HEADER: str(text.data.get("event", "page")),
        DELIVERY_HEADER: ref,
        TIMESTAMP_HEADER: stamp,
        SIGNATURE_HEADER: signature(secret, stamp, raw),
    }
    try:
        response = user_request(
            "POST", url, data=raw, headers=headers, deadline=timeout, allow_redirects=False
        )
    except OutgoingRefused as exc:
        raise SendError(f"webhook ({shown}): {exc}") from None
    except requests.Timeout:
        raise _late(f"webhook ({shown})", timeout) from None
    except requests.RequestException as exc:
        raise SendError(
            f"Could not reach webhook ({shown}): {failure_reason(exc)}. Check the URL and "
            "that the worker can reach that host."
        ) from None
    if 200 <= response.status_code < 300:
        return
    if 300 <= response.status_code < 400:
        raise SendError(
            f"webhook ({shown}) answered HTTP {response.status_code}: point it at the final "
            "URL (redirects are not followed)."
        )
    if response.status_code in (401, 403):
        raise SendError(
            f"webhook ({shown}) answered HTTP {response.status_code}: check that the "
            "receiver has the signing key after #secret= in the address."
        )
    raise _status_error(f"webhook ({shown})", response.status_code)
