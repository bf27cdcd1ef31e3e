"""The one place every HTTP connection is opened: urllib3's create_connection and the
standard library's socket.create_connection (http.client, so urllib and slack_sdk's
WebClient; httpcore, so httpx and the Mattermost driver), each wrapped once. Outside
`guarded()` and `deadline()` blocks they are the originals, untouched.

Inside `guarded()` the host is resolved once, every address it resolved to is checked
(console/outgoing/policy.py), and the socket connects to those checked addresses and no
others: the check and the connection cannot see two different DNS answers (no
rebinding), and each redirect hop opens its own connection, so it is checked too. TLS
still verifies the certificate against the host name (urllib3 wraps the socket after
this), and the Host header and SNI keep the name.

Inside `deadline()` the connect waits at most the time left, and the socket is handed
to the block, whose timer shuts it down when the time is up.
"""

from __future__ import annotations

import contextvars
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import urllib3.util.connection as urllib3_connection
from urllib3.util.timeout import _DEFAULT_TIMEOUT

from console.outgoing import deadline as deadlines
from console.outgoing.errors import OutgoingRefused
from console.outgoing.policy import Allowlist, allowlist, check_addresses


@dataclass
class Guard:
    """One guarded block: its allowlist, and the refusal, if any (apprise swallows
    exceptions, so its caller reads the refusal here)."""

    allowed: Allowlist
    refused: OutgoingRefused | None = field(default=None)


_guard: contextvars.ContextVar[Guard | None] = contextvars.ContextVar(
    "console_outgoing_guard", default=None
)


@contextmanager
def guarded() -> Iterator[Guard]:
    """Check every connection opened inside the block against the address policy."""
    guard = Guard(allowlist())
    token = _guard.set(guard)
    try:
        yield guard
    finally:
        _guard.reset(token)


def create_connection(
    address: tuple[str, int],
    timeout: Any = _DEFAULT_TIMEOUT,
    source_address: tuple[str, int] | None = None,
    socket_options: Any = None,
) -> socket.socket:
    guard, blocks = _guard.get(), deadlines.active()
    if guard is None and not blocks:
        return _original(address, timeout, source_address, socket_options)
    host, port = address
    host = host.strip("[]")
    if blocks:
        left = min(block.remaining() for block in blocks)
        if left <= 0:
            for block in blocks:
                block.refuse()
            raise TimeoutError("the call's deadline has passed")
        timeout = left if timeout in (_DEFAULT_TIMEOUT, None) else min(timeout, left)
    infos = socket.getaddrinfo(
        host, port, urllib3_connection.allowed_gai_family(), socket.SOCK_STREAM
    )
    if guard is not None:
        try:
            check_addresses(host, [str(info[4][0]) for info in infos], guard.allowed)
        except OutgoingRefused as exc:
            guard.refused = exc
            raise
    sock = _connect(infos, timeout, source_address, socket_options)
    for block in blocks:
        if not block.register(sock):
            sock.close()
            block.refuse()
            raise TimeoutError("the call's deadline has passed")
    return sock


def _connect(
    infos: list[Any], timeout: Any, source_address: Any, socket_options: Any
) -> socket.socket:
    """urllib3's connect loop, over the addresses already resolved and checked."""
    error: OSError | None = None
    for family, kind, proto, _name, sockaddr in infos:
        sock = None
        try:
            sock = socket.socket(family, kind, proto)
            for option in socket_options or ():
                sock.setsockopt(*option)
            if timeout is not _DEFAULT_TIMEOUT:
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            error = exc
            if sock is not None:
                sock.close()
    raise error or OSError("getaddrinfo returned no address")


_original = urllib3_connection.create_connection
_socket_original = socket.create_connection
_install_lock = threading.Lock()


def socket_create_connection(
    address: tuple[str, int],
    timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
    source_address: tuple[str, int] | None = None,
    **kwargs: Any,
) -> socket.socket:
    """socket.create_connection, checked and bounded like urllib3's inside a block."""
    if _guard.get() is None and not deadlines.active():
        return _socket_original(address, timeout, source_address, **kwargs)
    default = timeout is socket._GLOBAL_DEFAULT_TIMEOUT  # type: ignore[attr-defined]
    return create_connection(address, _DEFAULT_TIMEOUT if default else timeout, source_address)


def install() -> None:
    """Hook urllib3 (idempotent). urllib3.connection calls
    `connection.create_connection` through its module, so replacing it there reaches
    every pool and every client built on urllib3."""
    with _install_lock:
        if urllib3_connection.create_connection is not create_connection:
            urllib3_connection.create_connection = create_connection
        # http.client takes socket.create_connection when a connection is made, httpcore
        # when it connects: both find this one.
        if socket.create_connection is not socket_create_connection:
            socket.create_connection = socket_create_connection  # type: ignore[assignment]
