"""A local HTTP server speaking the silences part of Alertmanager's v2 API (list, create,
read, expire), keeping its silences in memory. The unit tests drive the console's real
client (requests) against it; the real Alertmanager is in
tests/integration/test_silences_alertmanager.py."""

from __future__ import annotations

import json
import re
import threading
import uuid
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeAlertmanager:
    def __init__(self) -> None:
        self.silences: dict[str, dict] = {}
        self.requests: list[tuple[str, str]] = []  # (method, path)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, body) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                fake.requests.append(("GET", self.path))
                if self.path == "/api/v2/silences":
                    return self._send(200, list(fake.silences.values()))
                found = fake.silences.get(self.path.removeprefix("/api/v2/silence/"))
                return self._send(200, found) if found else self._send(404, "silence not found")

            def do_POST(self):
                fake.requests.append(("POST", self.path))
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                problem = _invalid(body["matchers"])
                if problem:
                    return self._send(400, f"silence invalid: {problem}")
                silence_id = str(uuid.uuid4())
                fake.silences[silence_id] = {
                    **body,
                    "id": silence_id,
                    "status": {"state": "active"},
                    "updatedAt": _now().isoformat(),
                }
                return self._send(200, {"silenceID": silence_id})

            def do_DELETE(self):
                fake.requests.append(("DELETE", self.path))
                found = fake.silences.get(self.path.removeprefix("/api/v2/silence/"))
                if not found:
                    return self._send(404, "silence not found")
                found["status"] = {"state": "expired"}
                found["endsAt"] = _now().isoformat()
                return self._send(200, "")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add(self, matchers: list[dict], *, created_by: str, comment: str = "") -> str:
        """A silence someone made in Alertmanager itself, for an hour; its id."""
        silence_id = str(uuid.uuid4())
        self.silences[silence_id] = {
            "id": silence_id,
            "matchers": [{"isRegex": False, "isEqual": True, **m} for m in matchers],
            "startsAt": _now().isoformat(),
            "endsAt": (_now() + timedelta(hours=1)).isoformat(),
            "createdBy": created_by,
            "comment": comment,
            "status": {"state": "active"},
            "updatedAt": _now().isoformat(),
        }
        return silence_id

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _now() -> datetime:
    return datetime.now(UTC)


def _invalid(matchers: list[dict]) -> str:
    """Alertmanager's own checks of a new silence's matchers."""
    if not matchers:
        return "at least one matcher required"
    empty_ok = []
    for m in matchers:
        if m.get("isRegex"):
            try:
                pattern = re.compile(f"(?:{m['value']})")
            except re.error as exc:
                return f"invalid regular expression {m['value']!r}: {exc}"
            hit = pattern.fullmatch("") is not None
        else:
            hit = m["value"] == ""
        empty_ok.append(hit == m.get("isEqual", True))
    if all(empty_ok):
        return "at least one matcher must not match the empty string"
    return ""
