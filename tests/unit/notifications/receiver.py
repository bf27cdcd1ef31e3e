"""A real HTTP server on a free local port that records what it is sent and answers with
the status codes a test scripts (then 200): the stand-in for Slack and for a webhook
receiver."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.script: list[int] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.received.append(Received(self.path, dict(self.headers), body))
                    status = receiver.script.pop(0) if receiver.script else 200
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok" if status < 300 else b"receiver says no")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def answer(self, *statuses: int) -> None:
        """The next requests get these statuses, in order; later ones get 200."""
        with self._lock:
            self.script = list(statuses)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
