"""Local servers that speak the protocols pages are sent over, for tests of paging (and of
anything that pages): each is a real server on 127.0.0.1 and a free port, so the real
client (apprise, requests, smtplib) and the outgoing guard are exercised end to end.

- NtfyServer: ntfy's publish API (JSON to "/" as apprise sends it to a self-hosted
  server, or a plain body to "/<topic>"), messages recorded per topic.
- GotifyServer: Gotify's POST /message with the application token (X-Gotify-Key or
  ?token=); an unknown token answers 401.
- WebhookReceiver: any POST, recorded with its headers; `signature_ok` checks the
  X-Console-Signature header as a receiver would.
- SmtpServer: a real SMTP server (aiosmtpd), messages recorded; it can refuse
  recipients with a 4xx or 5xx.

Every HTTP one can be told to answer the next requests with a status (`answer(500)`)
or to hold them unanswered until `release()` (a service that hangs: the caller's
deadline must end the wait). Tests that send to them set
settings.OUTGOING_URL_ALLOWLIST to admit 127.0.0.1 (the `pager_allow_local` fixture).
Page-making helpers for the tests are at the end.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiosmtpd.controller import Controller
from django.utils import timezone

from pager.models import (
    ContactKind,
    ContactMethod,
    DeliveryState,
    Escalation,
    Page,
    PageDelivery,
)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class _HttpStub:
    """A threaded HTTP server recording requests, with scripted answers and holds."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._script: list[int] = []
        self._hold = threading.Event()
        self._hold.set()  # set: answer at once
        self._released = threading.Event()
        self.held = threading.Event()  # set once a request is being held
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                request = Request("POST", self.path, dict(self.headers), body)
                with stub._lock:
                    stub.requests.append(request)
                    status = stub._script.pop(0) if stub._script else None
                if not stub._hold.is_set():
                    stub.held.set()
                    stub._released.wait(60)  # until release() or teardown
                    return  # hang up without answering
                status = status or stub.handle(request)
                payload = json.dumps({"code": status}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def handle(self, request: Request) -> int:
        return 200

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server.server_port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def answer(self, *statuses: int) -> None:
        """The next requests get these statuses, in order; later ones are handled."""
        with self._lock:
            self._script = list(statuses)

    def hang(self) -> None:
        """Hold every request unanswered until release()."""
        self._hold.clear()

    def release(self) -> None:
        self._hold.set()
        self._released.set()

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


class NtfyServer(_HttpStub):
    def __init__(self) -> None:
        self.messages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        super().__init__()

    def handle(self, request: Request) -> int:
        path = urlsplit(request.path).path.strip("/")
        if path:  # POST /<topic> with the message as the body
            topic = path
            message = {"message": request.body.decode(), "title": request.headers.get("Title", "")}
        else:
            message = request.json()
            topic = message.get("topic", "")
        if not topic:
            return 400
        message["headers"] = request.headers
        self.messages[topic].append(message)
        return 200


class GotifyServer(_HttpStub):
    def __init__(self, tokens: tuple[str, ...] = ("AppTok3nForTests",)) -> None:
        self.tokens = set(tokens)
        self.messages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        super().__init__()

    def handle(self, request: Request) -> int:
        parts = urlsplit(request.path)
        if not parts.path.endswith("/message"):
            return 404
        token = request.headers.get("X-Gotify-Key") or parse_qs(parts.query).get("token", [""])[0]
        if token not in self.tokens:
            return 401
        self.messages[token].append(request.json())
        return 200


class WebhookReceiver(_HttpStub):
    def signature_ok(self, request: Request, secret: str) -> bool:
        """What a receiver checks: HMAC-SHA256 over "<timestamp>.<body>"."""
        stamp = request.headers.get("X-Console-Timestamp", "")
        mac = hmac.new(secret.encode(), stamp.encode() + b"." + request.body, hashlib.sha256)
        given = request.headers.get("X-Console-Signature", "")
        return hmac.compare_digest(given, "sha256=" + mac.hexdigest())


@dataclass
class Mail:
    sender: str
    recipients: list[str]
    message: Message

    @property
    def subject(self) -> str:
        return str(self.message["Subject"] or "")

    def text(self) -> str:
        part = self.message.get_payload(decode=True)
        charset = self.message.get_content_charset() or "utf-8"
        return part.decode(charset) if isinstance(part, bytes) else str(part)


@dataclass
class _SmtpHandler:
    mails: list[Mail] = field(default_factory=list)
    refuse: str = ""  # an SMTP reply to every RCPT ("550 ...", "451 ...")

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.refuse:
            return self.refuse
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.mails.append(
            Mail(envelope.mail_from, list(envelope.rcpt_tos), message_from_bytes(envelope.content))
        )
        return "250 Message accepted for delivery"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SmtpServer:
    def __init__(self) -> None:
        self.handler = _SmtpHandler()
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=_free_port())
        self.controller.start()

    @property
    def port(self) -> int:
        return int(self.controller.port)

    @property
    def mails(self) -> list[Mail]:
        return self.handler.mails

    def refuse_recipients(self, reply: str) -> None:
        self.handler.refuse = reply

    def configure(self, settings: Any) -> None:
        """Point Django's mail at this server (pytest-django's `settings` fixture)."""
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST = "127.0.0.1"
        settings.EMAIL_PORT = self.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""

    def close(self) -> None:
        self.controller.stop()


# --- fixtures -----------------------------------------------------------------------------------
@pytest.fixture
def pager_allow_local(settings):
    # The outgoing guard refuses loopback unless the operator allows it.
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    settings.PAGER_RETRY_BACKOFF_SECONDS = 0


@pytest.fixture
def ntfy(pager_allow_local):
    server = NtfyServer()
    yield server
    server.close()


@pytest.fixture
def gotify(pager_allow_local):
    server = GotifyServer()
    yield server
    server.close()


@pytest.fixture
def webhook(pager_allow_local):
    server = WebhookReceiver()
    yield server
    server.close()


@pytest.fixture
def smtp(settings):
    server = SmtpServer()
    server.configure(settings)
    yield server
    server.close()


# --- pages to send through them -----------------------------------------------------------------
def contact(
    user: Any, kind: str, address: str, *, position: int | None = None, **kw: Any
) -> ContactMethod:
    """A contact method at the end of the person's order (no service: test setup)."""
    if position is None:
        position = ContactMethod.objects.filter(user=user).count() + 1
    return ContactMethod.objects.create(
        user=user, kind=kind, address=address, position=position, **kw
    )


def page_for(user: Any, incident: Any, *, key: str = "", repage_round: int = 0) -> Page:
    """A page to `user` with one delivery per enabled contact method, in order: what the
    escalation engine makes."""
    now = timezone.now()
    escalation, _ = Escalation.objects.get_or_create(
        incident=incident, episode=incident.reopen_count, defaults={"started_at": now}
    )
    page = Page.objects.create(
        escalation=escalation,
        incident=incident,
        user=user,
        key=key or f"{incident.pk}:{incident.reopen_count}:{repage_round}:0:1:u{user.pk}",
        step_position=1,
        repage_round=repage_round,
        due_at=now,
        created_at=now,
    )
    methods = ContactMethod.objects.filter(user=user, enabled=True).order_by("position")
    PageDelivery.objects.bulk_create(
        PageDelivery(page=page, method=m, kind=m.kind, position=n, state=DeliveryState.PENDING)
        for n, m in enumerate(methods, start=1)
    )
    return page


def ntfy_url(server: NtfyServer, topic: str = "alice-pages-7f3k") -> str:
    return f"ntfy://{server.host}/{topic}"


def gotify_url(server: GotifyServer, token: str = "AppTok3nForTests") -> str:  # noqa: S107
    return f"gotify://{server.host}/{token}"


__all__ = [
    "ContactKind",
    "GotifyServer",
    "Mail",
    "NtfyServer",
    "SmtpServer",
    "WebhookReceiver",
    "contact",
    "gotify_url",
    "ntfy_url",
    "page_for",
]
