"""Outgoing-call benchmark (a benchmark, not a test; run it with `make bench`).

What the outgoing guard costs a delivery (console/outgoing): the same small JSON POST to
a local receiver, sent the way notifications sent it before the guard (`requests.post`
with a timeout) and through `user_request` (address check on every resolved address,
the connection pinned to the checked address, an overall-deadline timer, the answer
read inside it) and `service_request` (the deadline without the address check). Rounds
alternate so that the machine's drift falls on all three alike. Prints p50/p95 per way
and each p50 as a ratio of the baseline's.

Environment: BENCH_OUTGOING_CALLS (300 per way and round), BENCH_OUTGOING_ROUNDS (5).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("SECRET_KEY", "bench-outgoing")
os.environ.setdefault("ALERTMANAGER_TOKEN", "bench-outgoing")
os.environ.setdefault("FIELD_ENCRYPTION_KEYS", "bench-outgoing-field-encryption-key-0001")
os.environ["OUTGOING_URL_ALLOWLIST"] = "127.0.0.1/32"  # the local receiver, as tests do
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

import requests  # noqa: E402

from console.outgoing import service_request, user_request  # noqa: E402
from tests.bench.summary import record  # noqa: E402

CALLS = int(os.environ.get("BENCH_OUTGOING_CALLS", "300"))
ROUNDS = int(os.environ.get("BENCH_OUTGOING_ROUNDS", "5"))
BODY = b'{"event":"incident_opened","summary":"#12 VLLMHighTTFT on vllm-chat"}'
DEADLINE = 10.0
MAX_RATIO = 1.5  # the guard may add at most half of a bare local call


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def bare(url: str) -> None:
    requests.post(url, data=BODY, timeout=DEADLINE, allow_redirects=False)


def guarded(url: str) -> None:
    user_request("POST", url, deadline=DEADLINE, data=BODY)


def service(url: str) -> None:
    service_request("POST", url, deadline=DEADLINE, data=BODY)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    ways = {"requests.post (before)": bare, "user_request": guarded, "service_request": service}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for way in ways.values():  # warm up connections' code paths and imports
        way(url)
    for _ in range(ROUNDS):
        for name, way in ways.items():
            for _ in range(CALLS):
                start = time.perf_counter()
                way(url)
                times[name].append(time.perf_counter() - start)
    server.shutdown()
    base = pct(times["requests.post (before)"], 0.5)
    print(f"outgoing calls: {CALLS} x {ROUNDS} rounds per way, local receiver")
    for name, values in times.items():
        p50, p95 = pct(values, 0.5), pct(values, 0.95)
        print(f"  {name:24} p50 {p50 * 1000:6.2f} ms  p95 {p95 * 1000:6.2f} ms  {p50 / base:4.2f}x")
    ratio = pct(times["user_request"], 0.5) / base
    verdict = "PASS" if ratio <= MAX_RATIO else "MISS"
    print(f"  {verdict} guarded call within {MAX_RATIO}x of the bare call: {ratio:.2f}x")
    record("outgoing", "guarded call (user_request) vs the bare call, p50", ratio, MAX_RATIO,
           ratio <= MAX_RATIO)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
