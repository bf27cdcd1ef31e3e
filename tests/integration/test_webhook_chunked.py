"""A chunked webhook body (Transfer-Encoding: chunked, no Content-Length) is read whole
under gunicorn (production) and Django's development server, within WEBHOOK_MAX_BYTES.
Django alone reads such a request as empty, which answered 400 "not valid JSON"."""

import contextlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from incidents.models import Incident, ReceiptOutcome, WebhookReceipt
from tests.helpers import free_port, wait_for
from tests.integration.conftest import database_url
from tests.payloads import alert, notification

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(120),
]
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TOKEN = "chunk-t0ken"
LIMIT = 20_000
SERVERS = {
    # As the Dockerfile runs it (sync workers), and as `make run` does (threads).
    "gunicorn": [str(BIN / "gunicorn"), "config.wsgi:application", "--workers", "1",
                 "--no-control-socket", "--bind"],
    "gunicorn-threads": [str(BIN / "gunicorn"), "config.wsgi:application", "--workers", "1",
                         "--threads", "2", "--no-control-socket", "--bind"],
    "runserver": [str(BIN / "python"), "manage.py", "runserver", "--noreload", "--nothreading"],
}  # fmt: skip


@pytest.fixture(params=sorted(SERVERS))
def server(request, require_postgres, tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": "filesystem://",
        "SECRET_KEY": "chunked-test",
        "ALERTMANAGER_TOKEN": TOKEN,
        "WEBHOOK_MAX_BYTES": str(LIMIT),
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback
        "VAR_DIR": str(tmp_path),
    }
    log = open(tmp_path / "server.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [*SERVERS[request.param], f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: requests.get(base + "/healthz", timeout=2).ok, timeout=30,
                 what=f"{request.param} to answer")  # fmt: skip
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()


def post_chunked(base: str, body: bytes, *, chunk: int = 1000) -> tuple[int, dict]:
    """POST with Transfer-Encoding: chunked and no Content-Length, over a raw socket so
    the framing is exactly what a proxy or client library would send."""
    host, port = base.removeprefix("http://").split(":")
    framed = b"".join(
        f"{len(part):x}\r\n".encode() + part + b"\r\n"
        for part in (body[i : i + chunk] for i in range(0, len(body), chunk))
    )
    head = (
        f"POST /api/v1/alerts/alertmanager HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=20) as s:
        # A server refusing an over-limit body answers and closes before reading it all:
        # the rest of the send, or the half-close, may then meet a closed connection.
        with contextlib.suppress(OSError):
            s.sendall(head + framed + b"0\r\n\r\n")
            s.shutdown(socket.SHUT_WR)
        answer = bytearray()
        with contextlib.suppress(ConnectionResetError):
            while data := s.recv(65536):
                answer += data
    status_line, _, rest = bytes(answer).partition(b"\r\n")
    payload = rest.split(b"\r\n\r\n", 1)[1]
    return int(status_line.split()[1]), json.loads(payload)


def test_a_chunked_body_is_read_whole(server):
    body = json.dumps(notification([alert(pod=f"vllm-chat-{i}") for i in range(8)])).encode()
    assert len(body) > 4000  # several chunks
    status, data = post_chunked(server, body)
    assert status == 200, data
    assert data["received"] == 8
    receipt = WebhookReceipt.objects.get(pk=data["receipt"])
    assert receipt.outcome == ReceiptOutcome.ACCEPTED
    assert receipt.body.encode() == body
    assert Incident.objects.get().alerts.count() == 8


def test_a_chunked_body_over_the_limit_is_413_and_not_stored(server):
    body = json.dumps(notification([alert(pod=f"vllm-chat-{i}") for i in range(60)])).encode()
    assert len(body) > LIMIT
    status, data = post_chunked(server, body)
    assert status == 413
    assert "max_alerts" in data["error"]
    assert not WebhookReceipt.objects.exists()
    assert not Incident.objects.exists()


# gunicorn refuses broken framing itself, before Django; the dev server leaves it to us.
@pytest.mark.parametrize("server", ["runserver"], indirect=True)
def test_broken_chunk_framing_is_400_with_a_receipt(server):
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(
            f"POST /api/v1/alerts/alertmanager HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nTransfer-Encoding: chunked\r\n"
            'Connection: close\r\n\r\n5\r\n{"al"\r\nzz\r\n'.encode()
        )
        s.shutdown(socket.SHUT_WR)
        answer = b""
        while data := s.recv(65536):
            answer += data
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    data = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert "chunk" in data["error"]
    receipt = WebhookReceipt.objects.get(pk=data["receipt"])
    assert receipt.outcome == ReceiptOutcome.REJECTED
    assert receipt.body == '{"al"'
