"""One server for the whole simulator: /metrics, the Kubernetes API under /api and
/apis, and the scenario controls under /sim (inject, clear, reset, status, history, faults).

One port, both schemes: a connection that opens with a TLS handshake is served over TLS
(the kubeconfig says https and carries the CA, so kubectl and every standard client work
unchanged), anything else as plain HTTP (Prometheus scrapes, the `python -m simulator`
commands and the drills' /sim calls keep their http:// URLs). A TLS record starts with
byte 0x16, which no HTTP method does, so one peeked byte tells them apart.

The fleet ticks in a background thread; `speed` simulated seconds pass per real second
(tests run faster than real time).
"""

import json
import logging
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

from simulator import metrics
from simulator.faults import RESOURCES, Faults
from simulator.fleet import Fleet
from simulator.k8s_api import ApiResponse, KubeApi, default_tokens
from simulator.k8s_auth import token_for
from simulator.k8s_errors import ApiError
from simulator.kubeconfig import write_kubeconfig
from simulator.objects import new_cluster
from simulator.reset import simulator_reset
from simulator.scenarios import SCENARIOS
from simulator.tls import server_tls
from simulator.variants import variant_names

log = logging.getLogger("simulator")
MAX_BODY = 1024 * 1024


class Simulator:
    def __init__(self, *, seed: int = 0, speed: float = 1.0, startup_delay_s: float = 20.0):
        self.store = new_cluster()
        self.fleet = Fleet(self.store, seed=seed, startup_delay_s=startup_delay_s)
        self.tokens = default_tokens()
        self.api = KubeApi(self.store, self.tokens)
        self.faults = Faults(self.store)
        self.speed = speed
        self.seed, self.startup_delay_s = seed, startup_delay_s
        self.lock = threading.Lock()
        self._stop = threading.Event()
        with self.lock:
            self.fleet.tick(1.0)  # pods exist from the first request on

    def run_ticks(self, interval: float = 1.0) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            next_at += interval
            with self.lock:
                self.fleet.tick(interval * self.speed)
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def stop(self) -> None:
        self._stop.set()

    # --- /sim controls ----------------------------------------------------------------
    def control(
        self, method: str, parts: list[str], query: dict | None = None, body: bytes = b""
    ) -> tuple[int, dict]:
        query = query or {}
        if method == "GET" and parts == ["status"]:
            with self.lock:
                return 200, {"scenarios": sorted(SCENARIOS), "variants": variant_names(),
                             **self.fleet.status()}  # fmt: skip
        if parts == ["faults"] and method in ("GET", "POST", "DELETE"):
            return self.faults.control(method, body)
        if method == "GET" and parts == ["history"]:
            # ?resource=leaderworkersets&name=vllm-chat; ConfigMaps by default.
            resource = RESOURCES.get((query.get("resource") or ["configmaps"])[0])
            if resource is None:
                return 400, {"error": f"resource must be one of {', '.join(RESOURCES)}"}
            name = (query.get("name") or [None])[0]
            changes = self.store.changes(resource, name)
            return 200, {
                "changes": [
                    {"at": c.at, "epoch": c.epoch, "actor": c.actor, "verb": c.verb,
                     "name": c.name, "resourceVersion": c.resource_version}
                    for c in changes
                ]
            }  # fmt: skip
        if method == "POST" and len(parts) == 2 and parts[0] == "inject":
            variant = (query.get("variant") or [""])[0]
            try:
                with self.lock:
                    already = parts[1] in self.fleet.active
                    self.fleet.inject(parts[1], variant)
                    state = self.fleet.active.get(parts[1]) or {}
                    # What the fault changed (scenario_changes.py), so the caller can
                    # keep it and later check what the clear took back.
                    recorded = _public(state.get("changes") or [])
            except ValueError as exc:
                return 400, {"error": str(exc)}
            return 200, {"injected": parts[1], "variant": variant, "already_active": already,
                         "changes": recorded}  # fmt: skip
        if method == "POST" and parts == ["reset"]:
            with self.lock:
                simulator_reset(self)
            return 200, {"reset": True, "scenarios": sorted(SCENARIOS)}
        if method == "POST" and parts[:1] == ["clear"] and len(parts) <= 2:
            slug = parts[1] if len(parts) == 2 else None
            try:
                with self.lock:
                    states = {s: st for s, st in self.fleet.active.items() if slug in (None, s)}
                    self.fleet.clear(slug)
            except ValueError as exc:
                return 400, {"error": str(exc)}
            # Per scenario, what its stop restored, cleared or left alone (and who changed
            # it since); a scenario that was not active had nothing to take back.
            reports = {s: _public(st.get("report") or []) for s, st in states.items()}
            answer: dict[str, object] = {"cleared": slug or "all", "reports": reports}
            if slug is not None:
                answer |= {"active": slug in states, "report": reports.get(slug, [])}
            return 200, answer
        return 404, {"error": f"no such control: {method} /sim/{'/'.join(parts)}"}


def _public(changes: list[dict]) -> list[dict]:
    """A scenario's change records as answered: without the internal timestamps."""
    return [{k: v for k, v in c.items() if k != "at_epoch"} for c in changes]


REASONS = {500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout", 429: "TooManyRequests"}


def fault_response(status: int) -> ApiResponse:
    """An injected failure, shaped like the apiserver's own Status error."""
    error = ApiError(status, REASONS.get(status, "InternalError"), f"injected fault ({status})")
    return ApiResponse(status, json.dumps(error.status()).encode())


def _handler(sim: Simulator):
    class Handler(BaseHTTPRequestHandler):
        server_version = "vllm-fleet-simulator"
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes; with Nagle on, keep-alive clients wait
        # ~40 ms for a delayed ACK on every answer.
        disable_nagle_algorithm = True

        def log_message(self, fmt, *args):  # route through logging, quieter
            log.debug("%s %s", self.address_string(), fmt % args)

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, status: int, data: dict) -> None:
            self._send(status, json.dumps(data, indent=2).encode(), "application/json")

        def _dispatch(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._json(413, {"error": "body too large"})
                return
            body = self.rfile.read(length) if length else b""
            path = url.path
            if path == "/metrics" and self.command in ("GET", "HEAD"):
                with sim.lock:
                    payload = metrics.render(sim.fleet)
                self._send(200, payload, metrics.CONTENT_TYPE)
            elif path in ("/healthz", "/readyz"):
                self._json(200, {"status": "ok"})
            elif path in ("/api", "/version") or path.startswith(("/api/", "/apis")):
                headers = dict(self.headers.items())
                query = parse_qs(url.query, keep_blank_values=True)
                resp = sim.faults.around(
                    self.command,
                    path,
                    lambda: sim.api.handle(self.command, path, query, headers, body),
                    lambda status: fault_response(status),
                    dry_run="All" in query.get("dryRun", []),
                )
                self._send(resp.status, resp.body, resp.content_type)
            elif path.startswith("/sim/"):
                parts = [p for p in path[5:].split("/") if p]
                query = parse_qs(url.query)
                status, data = sim.control(self.command, parts, query, body)
                self._json(status, data)
            else:
                self._json(404, {"error": f"not found: {path}"})

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _dispatch

    return Handler


TLS_HANDSHAKE = 0x16  # the first byte of a TLS record carrying a ClientHello
FIRST_BYTE_TIMEOUT = 10.0  # a client that connects and says nothing is dropped


class SimServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that also speaks TLS on the same port (see the module doc).
    The handshake happens in the connection's own thread, never in the accept loop."""

    daemon_threads = True
    tls_context: ssl.SSLContext | None = None

    def finish_request(self, request, client_address) -> None:
        if self.tls_context is None or not _opens_with_tls(request):
            super().finish_request(request, client_address)
            return
        try:
            request.settimeout(FIRST_BYTE_TIMEOUT)
            conn = self.tls_context.wrap_socket(request, server_side=True)
            conn.settimeout(None)
        except (ssl.SSLError, OSError) as exc:  # a client that does not trust our CA
            log.debug("TLS handshake with %s failed: %s", client_address, exc)
            return
        try:
            super().finish_request(conn, client_address)
        finally:
            conn.close()


def _opens_with_tls(sock: socket.socket) -> bool:
    try:
        sock.settimeout(FIRST_BYTE_TIMEOUT)
        first = sock.recv(1, socket.MSG_PEEK)
    except OSError:
        return False
    finally:
        sock.settimeout(None)
    return first[:1] == bytes([TLS_HANDSHAKE])


def serve(
    *,
    host: str,
    port: int,
    kubeconfig: Path,
    seed: int = 0,
    speed: float = 1.0,
    startup_delay_s: float = 20.0,
    advertise_url: str | None = None,
) -> None:
    sim = Simulator(seed=seed, speed=speed, startup_delay_s=startup_delay_s)
    httpd = SimServer((host, port), _handler(sim))
    # The URL clients should use: a wildcard bind address is not one, so fall back to
    # loopback unless told (e.g. http://simulator:9400).
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104
    server_url = advertise_url or f"http://{shown_host}:{httpd.server_address[1]}"
    # The kubeconfig names the same host and port over https, with the CA that signed a
    # certificate for that host.
    parts = urlsplit(server_url)
    api_url = urlunsplit(("https", parts.netloc, "", "", ""))
    tls = server_tls([parts.hostname or shown_host])
    httpd.tls_context = tls.context()
    kubeconfig.parent.mkdir(parents=True, exist_ok=True)
    # The console's worker gets a least-privilege token (the verbs the six actions use).
    write_kubeconfig(
        kubeconfig,
        server=api_url,
        token=token_for(sim.tokens, "console-worker"),
        certificate_authority_data=tls.ca_pem,
    )
    ticker = threading.Thread(target=sim.run_ticks, name="fleet-tick", daemon=True)
    ticker.start()
    print(
        f"vLLM fleet simulator (a test double, not a real cluster) on {server_url}\n"
        f"  metrics: {server_url}/metrics   Kubernetes API: {api_url}/apis\n"
        f"  kubeconfig: {kubeconfig} (kubectl --kubeconfig {kubeconfig} get lws)",
        flush=True,
    )
    try:
        httpd.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
        httpd.server_close()
