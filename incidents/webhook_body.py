"""Reading a webhook body whole, never more than the limit, with or without Content-Length.

Django reads a request without Content-Length as empty, so a chunked body
(Transfer-Encoding: chunked) would be rejected as "not JSON" although it was sent in
full. gunicorn decodes chunked framing itself and says so with `wsgi.input_terminated`;
Django's development server does not decode it, so we do it here from the socket.
"""

import re

from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest

_READ_SIZE = 64 * 1024
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,8}")
_MAX_TRAILER_LINES = 32


class BodyTooLarge(Exception):
    pass


class BodyUnreadable(Exception):
    """The framing is broken, or this server gives us no way to read the body;
    `partial` holds what was read, for the receipt."""

    def __init__(self, message: str, partial: bytes = b"") -> None:
        super().__init__(message)
        self.partial = partial


def read_body(request: HttpRequest, limit: int) -> bytes:
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


def _read_to_end(read, limit: int) -> bytes:
    out = bytearray()
    while True:
        data = read(_READ_SIZE)
        if not data:
            return bytes(out)
        out += data
        if len(out) > limit:
            raise BodyTooLarge


def _dechunk(read, readline, limit: int) -> bytes:
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
