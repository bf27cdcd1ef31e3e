"""Real local servers for the outgoing-call tests: one that records what reaches it and
answers as scripted (a status, a redirect), and one that drips a header line every half
second forever, the way a hostile or broken receiver holds a caller."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Recorder:
    """An HTTP server on `host` that records each request's path and Host header."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None
    ) -> None:
        self.requests: list[tuple[str, str]] = []  # (path, Host header)
        self.status, self.location, self.body = 200, "", b"ok"
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.requests.append((self.path, self.headers.get("Host", "")))
                self.send_response(recorder.status)
                if recorder.location:
                    self.send_header("Location", recorder.location)
                self.send_header("Content-Length", str(len(recorder.body)))
                self.end_headers()
                self.wfile.write(recorder.body)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.host, self.port = host, self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Dripper:
    """Accepts, reads the request, then sends a status line and one header line every
    `every` seconds, never ending the headers. Records when each client went away."""

    def __init__(self, host: str = "127.0.0.1", every: float = 0.5) -> None:
        self.every = every
        self.listener = socket.create_server((host, 0))
        self.host, self.port = host, self.listener.getsockname()[1]
        self.connections = 0
        self.released = threading.Event()  # a client closed its end while we dripped
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _serve(self) -> None:
        self.listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                for n in range(600):  # five minutes
                    if self._stop.is_set():
                        return
                    time.sleep(self.every)
                    conn.sendall(f"X-Drip-{n}: {'x' * 8}\r\n".encode())
            except OSError:
                self.released.set()

    def close(self) -> None:
        self._stop.set()
        self.listener.close()
