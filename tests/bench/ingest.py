"""Alert-ingestion benchmark (a benchmark, not a test; run it with `make bench`).

Posts a deterministic Alertmanager "storm" to the console's webhook served by gunicorn
(a real WSGI server) on PostgreSQL, and, in the same run, upserts the same alert rows
straight into the same table with psycopg: the floor any ingestion path pays. Prints
alerts/s for both, their ratio (target: console/baseline >= 0.5x), request latencies
and the peak RSS of the gunicorn processes.

The storm: a multi-cluster vLLM fleet (each cluster's Prometheus adds a `cluster`
external label; the route groups by cluster, alertname, namespace and lws), so every
(cluster, alert kind) is one groupKey whose notification lists its 50 pods. Notifications
open new groups, re-send unchanged ones (repeat_interval), resolve some alerts while
others fire again with a new startsAt, resolve whole groups, re-fire resolved groups,
and re-send resolved groups late. Like Alertmanager, one group's notifications are sent
in order, never two at once; different groups go concurrently (2 client threads).

Environment: BENCH_PAYLOADS (200), BENCH_SEED (1), BENCH_PG_HOST (127.0.0.1),
BENCH_PG_PORT (5432), BENCH_DEADLINE_S (600, per phase).
Exit status: 0 unless something failed (an answer other than 200, an error, or rows
that differ between the two phases); a low ratio is reported, not failed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import psutil
import psycopg
import requests
from psycopg import sql
from psycopg.types.json import Jsonb

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv" / "bin"
PYTHON = VENV_BIN / "python"
GUNICORN = VENV_BIN / "gunicorn"

PG_HOST = os.environ.get("BENCH_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("BENCH_PG_PORT", "5432"))
PG_USER = "postgres"
# Own databases per run (dropped at the end), so two runs on one server never collide.
CONSOLE_DB = f"bench_{os.getpid()}"
BASELINE_DB = f"bench_baseline_{os.getpid()}"

PAYLOADS = int(os.environ.get("BENCH_PAYLOADS", "200"))
SEED = int(os.environ.get("BENCH_SEED", "1"))
PHASE_DEADLINE_S = float(os.environ.get("BENCH_DEADLINE_S", "600"))
ALERTS_PER_PAYLOAD = 50
THREADS = 2
TOKEN = "bench-token"
WEBHOOK_PATH = "/api/v1/alerts/alertmanager"

STARTUP_DEADLINE_S = 60.0
MIGRATE_DEADLINE_S = 300.0
STOP_DEADLINE_S = 20.0
REQUEST_TIMEOUT = (5.0, 60.0)  # connect, read
MAX_FAILURES_PER_THREAD = 20

# Console settings that must come from this script, not from the caller's environment.
CONSOLE_ENV_KEYS = {
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "REDIS_URL",
    "ALERTMANAGER_TOKEN",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "PROMETHEUS_URL",
    "VAR_DIR",
    "LOG_LEVEL",
    "WEBHOOK_MAX_BYTES",
    "DJANGO_SETTINGS_MODULE",
    "INCIDENT_GROUP_BY",
    "GUNICORN_CMD_ARGS",
}


class BenchError(RuntimeError):
    """Setup or teardown went wrong (as opposed to a measured failure)."""


# --- the storm --------------------------------------------------------------------------
@dataclass(frozen=True)
class AlertKind:
    alertname: str
    runbook: str
    severity: str
    summary: str
    description: str
    expr: str


KINDS = (
    AlertKind(
        "VLLMHighTTFT",
        "ttft-spike",
        "critical",
        "TTFT p99 above 10s on {pod}",
        "Time to first token p99 on {pod} ({lws}, {cluster}) has been above 10s for 5m; "
        "requests are queueing (vllm:num_requests_waiting is rising).",
        "histogram_quantile(0.99, sum by (le, pod) "
        '(rate(vllm:time_to_first_token_seconds_bucket{namespace="llm-serving"}[5m]))) > 10',
    ),
    AlertKind(
        "VLLMKVCachePressure",
        "long-context-kv",
        "warning",
        "KV cache above 95% on {pod}",
        "vllm:kv_cache_usage_perc on {pod} ({lws}, {cluster}) has been above 0.95 for 5m; "
        "long-context requests are preempting short ones.",
        'vllm:kv_cache_usage_perc{namespace="llm-serving"} > 0.95',
    ),
    AlertKind(
        "VLLMEngineStalled",
        "nccl-hang",
        "critical",
        "Engine on {pod} produces no tokens",
        "{pod} ({lws}, {cluster}) has running requests but generated no tokens for 5m; "
        "a tensor-parallel peer is probably stuck in an NCCL collective.",
        "sum by (namespace, pod) (rate(vllm:generation_tokens_total[5m])) == 0 "
        "and sum by (namespace, pod) (vllm:num_requests_running) > 0",
    ),
)
NAMESPACE = "llm-serving"
LWS = "vllm-chat"
LWS_GROUPS = 10  # pods vllm-chat-<g>-<i>: 10 LWS groups x 5 pods = 50 alerts per group
PODS_PER_LWS_GROUP = ALERTS_PER_PAYLOAD // LWS_GROUPS
MODEL_VERSION = "llama-3.1-70b-instruct-2026-10"
BASE_TIME = datetime(2026, 10, 5, 2, 0, tzinfo=UTC)
GO_ZERO_TIME = "0001-01-01T00:00:00Z"

_FNV_OFFSET64 = 14695981039346656037
_FNV_PRIME64 = 1099511628211
_MASK64 = (1 << 64) - 1


def fingerprint(labels: dict[str, str]) -> str:
    """Alertmanager's alert fingerprint: FNV-1a 64 over the sorted label pairs."""
    h = _FNV_OFFSET64
    for name in sorted(labels):
        for part in (name.encode(), labels[name].encode()):
            for byte in part:
                h = ((h ^ byte) * _FNV_PRIME64) & _MASK64
            h = ((h ^ 0xFF) * _FNV_PRIME64) & _MASK64
    return f"{h:016x}"


def rfc3339(ns: int) -> str:
    """Go's time.MarshalJSON: RFC 3339 with up to 9 fractional digits, zeros trimmed."""
    seconds, frac = divmod(ns, 1_000_000_000)
    text = (BASE_TIME + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + "Z"


def as_datetime(ns: int) -> datetime:
    """What PostgreSQL keeps of a timestamp: microseconds."""
    return BASE_TIME + timedelta(microseconds=ns // 1000)


@dataclass
class Slot:
    labels: dict[str, str]
    annotations: dict[str, str]
    fingerprint: str
    generator_url: str
    starts_ns: int = 0
    ends_ns: int | None = None  # set once resolved

    @property
    def firing(self) -> bool:
        return self.ends_ns is None


@dataclass
class Group:
    index: int
    cluster: str
    kind: AlertKind
    group_key: str
    group_labels: dict[str, str]
    slots: list[Slot]
    firing: bool = False
    last_body: bytes = b""
    last_rows: list[tuple] = field(default_factory=list)


@dataclass
class Notification:
    group: int
    thread: int
    event: str
    body: bytes
    rows: list[tuple]  # the baseline's upsert parameters, one tuple per alert


@dataclass
class Storm:
    notifications: list[Notification]
    events: Counter
    alert_mix: Counter
    distinct_rows: int
    final_status: Counter


def _new_group(index: int, rng: random.Random) -> Group:
    cluster = f"gpu-cluster-{index // len(KINDS) + 1:02d}"
    kind = KINDS[index % len(KINDS)]
    group_labels = {"alertname": kind.alertname, "cluster": cluster, "lws": LWS}
    group_labels["namespace"] = NAMESPACE
    pairs = ", ".join(f'{k}="{v}"' for k, v in sorted(group_labels.items()))
    slots = []
    for g in range(LWS_GROUPS):
        node = f"gpu-node-{rng.randint(1, 64)}"
        for i in range(PODS_PER_LWS_GROUP):
            pod = f"{LWS}-{g}-{i}"
            labels = {
                "alertname": kind.alertname,
                "cluster": cluster,
                "namespace": NAMESPACE,
                "lws": LWS,
                "pod": pod,
                "node": node,
                "model_version": MODEL_VERSION,
                "severity": kind.severity,
                "runbook": kind.runbook,
                "job": "vllm",
                "instance": f"10.{index % 250}.{g}.{10 + i}:8000",
            }
            fields = {"pod": pod, "lws": LWS, "cluster": cluster}
            annotations = {
                "summary": kind.summary.format(**fields),
                "description": kind.description.format(**fields),
                "runbook_url": f"http://console.example/runbooks/{kind.runbook}",
            }
            generator_url = (
                f"http://prometheus-{cluster}:9090/graph?g0.expr={quote(kind.expr, safe='')}"
                "&g0.tab=1"
            )
            slots.append(Slot(labels, annotations, fingerprint(labels), generator_url))
    return Group(
        index=index,
        cluster=cluster,
        kind=kind,
        group_key=f'{{}}/{{namespace="{NAMESPACE}"}}:{{{pairs}}}',
        group_labels=group_labels,
        slots=slots,
    )


def _common(maps: Sequence[dict[str, str]]) -> dict[str, str]:
    first, *rest = maps
    return {k: v for k, v in first.items() if all(m.get(k) == v for m in rest)}


def _render(group: Group, reason: str) -> tuple[bytes, list[tuple]]:
    """One webhook body in Alertmanager's field order, and the matching upsert rows."""
    alerts, rows = [], []
    for s in group.slots:
        status = "firing" if s.firing else "resolved"
        alerts.append(
            {
                "status": status,
                "labels": s.labels,
                "annotations": s.annotations,
                "startsAt": rfc3339(s.starts_ns),
                "endsAt": GO_ZERO_TIME if s.firing else rfc3339(s.ends_ns),
                "generatorURL": s.generator_url,
                "fingerprint": s.fingerprint,
            }
        )
        rows.append(
            (
                s.fingerprint,
                as_datetime(s.starts_ns),
                s.labels["alertname"],
                status,
                s.labels["severity"],
                Jsonb(s.labels),
                Jsonb(s.annotations),
                None if s.firing else as_datetime(s.ends_ns),
                s.generator_url,
                group.group_key,
            )
        )
    body = {
        "receiver": "incident-console",
        "status": "firing" if any(s.firing for s in group.slots) else "resolved",
        "alerts": alerts,
        "notification_reason": reason,
        "groupLabels": group.group_labels,
        "commonLabels": _common([s.labels for s in group.slots]),
        "commonAnnotations": _common([s.annotations for s in group.slots]),
        "externalURL": "http://alertmanager:9093",
        "version": "4",
        "groupKey": group.group_key,
        "truncatedAlerts": 0,
    }
    return json.dumps(body, separators=(",", ":")).encode(), rows


def build_storm(n: int, seed: int) -> Storm:
    rng = random.Random(seed)
    groups: list[Group] = []
    notifications: list[Notification] = []
    events: Counter = Counter()
    alert_mix: Counter = Counter()
    last_status: dict[tuple[str, int], str] = {}
    clock = 0  # ns since BASE_TIME

    def start(slot: Slot) -> None:
        # Within group_wait (30s) before the notification, after the previous episode.
        starts = clock - rng.randrange(10**9, 30_000_000_000) + rng.randrange(1, 10**9)
        if slot.ends_ns is not None:
            starts = max(starts, slot.ends_ns + rng.randrange(1_000_000, 2_000_000))
        slot.starts_ns, slot.ends_ns = starts, None

    def end(slot: Slot) -> None:
        ends = clock - rng.randrange(0, 30_000_000_000)
        slot.ends_ns = max(ends, slot.starts_ns + rng.randrange(1_000_000, 2_000_000))

    for _ in range(n):
        clock += rng.randrange(500_000_000, 20_000_000_000)
        firing = [g for g in groups if g.firing]
        quiet = [g for g in groups if not g.firing]
        r = rng.random()
        if not firing or r < 0.25:
            if quiet and rng.random() < 0.3:
                event, group = "refire", rng.choice(quiet)  # same groupKey fires again
            else:
                event, group = "new", _new_group(len(groups), rng)
                groups.append(group)
            for s in group.slots:
                start(s)
            group.firing = True
            reason = "first notification" if event == "new" else "new alerts added"
        elif r < 0.6:
            # An unchanged group, sent again (repeat_interval, or a retry that had landed);
            # now and then a group that resolved earlier, re-sent late.
            pool = quiet if quiet and rng.random() < 0.15 else firing
            event, group = ("late-resolved" if pool is quiet else "repeat"), rng.choice(pool)
            notifications.append(
                Notification(group.index, 0, event, group.last_body, group.last_rows)
            )
            events[event] += 1
            for row in group.last_rows:
                alert_mix["re-sent"] += 1
                last_status[(row[0], row[1])] = row[3]
            continue
        elif r < 0.85:
            # Some pods recover, and the ones that recovered last time fire again.
            event, group = "partial", rng.choice(firing)
            for s in group.slots:
                if not s.firing:
                    start(s)
            live = [s for s in group.slots if s.firing]
            for s in rng.sample(live, rng.randint(3, 15)):
                end(s)
            reason = "some alerts resolved"
        else:
            event, group = "resolve", rng.choice(firing)
            for s in group.slots:
                if s.firing:
                    end(s)
            group.firing = False
            reason = "all alerts resolved"
        body, rows = _render(group, reason)
        group.last_body, group.last_rows = body, rows
        notifications.append(Notification(group.index, 0, event, body, rows))
        events[event] += 1
        for row in rows:
            key, status = (row[0], row[1]), row[3]
            previous = last_status.get(key)
            if previous is None:
                alert_mix["new"] += 1
            elif previous == status:
                alert_mix["re-sent"] += 1
            else:
                alert_mix["resolved"] += 1
            last_status[key] = status

    # One group's notifications stay on one thread, in order; groups spread over threads.
    for note in notifications:
        note.thread = note.group % THREADS
    return Storm(
        notifications=notifications,
        events=events,
        alert_mix=alert_mix,
        distinct_rows=len(last_status),
        final_status=Counter(last_status.values()),
    )


# --- PostgreSQL -------------------------------------------------------------------------
def dsn(dbname: str) -> str:
    return f"postgres://{PG_USER}@{PG_HOST}:{PG_PORT}/{dbname}"


def _admin() -> psycopg.Connection:
    return psycopg.connect(
        host=PG_HOST,
        port=PG_PORT,
        user=PG_USER,
        dbname="postgres",
        autocommit=True,
        connect_timeout=5,
    )


def reset_database(name: str) -> None:
    with _admin() as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(name: str) -> None:
    with _admin() as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def console_env(dbname: str, var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CONSOLE_ENV_KEYS}
    env.update(
        DJANGO_SETTINGS_MODULE="console.settings",
        DATABASE_URL=dsn(dbname),
        ALERTMANAGER_TOKEN=TOKEN,
        SECRET_KEY="bench",
        DEBUG="false",
        CELERY_BROKER_URL="filesystem://",
        VAR_DIR=str(var_dir),
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
        SECURE_SSL_REDIRECT="0",  # plain HTTP to 127.0.0.1
        SECURE_COOKIES="0",
    )
    return env


def migrate(databases: Sequence[str], tmp: Path) -> None:
    """`manage.py migrate` into each database, concurrently, with a deadline."""
    procs = []
    for name in databases:
        log = (tmp / f"migrate-{name}.log").open("wb")
        cmd = [str(PYTHON), "manage.py", "migrate", "--noinput"]
        env = console_env(name, tmp / f"var-{name}")
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        procs.append((name, proc, log))
    deadline = time.monotonic() + MIGRATE_DEADLINE_S
    failed = []
    for name, proc, log in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
        if proc.returncode != 0:
            failed.append(f"{name}: exit {proc.returncode}\n{_tail(Path(log.name))}")
    if failed:
        raise BenchError("manage.py migrate failed:\n" + "\n".join(failed))


def table_counts(dbname: str) -> dict[str, object]:
    with psycopg.connect(dsn(dbname), connect_timeout=5) as conn:
        status = dict(
            conn.execute("SELECT status, count(*) FROM incidents_alert GROUP BY status").fetchall()
        )
        incidents = conn.execute("SELECT count(*) FROM incidents_incident").fetchone()[0]
    return {"rows": sum(status.values()), "status": status, "incidents": incidents}


# --- the two phases ---------------------------------------------------------------------
@dataclass
class PhaseResult:
    name: str
    alerts: int = 0
    wall_s: float = 0.0
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def alerts_per_s(self) -> float:
        return self.alerts / self.wall_s if self.wall_s else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_phase(
    name: str,
    storm: Storm,
    worker: Callable[[list[Notification], PhaseResult, threading.Barrier, float], None],
) -> PhaseResult:
    """Run `worker` on THREADS threads (each its share of the storm) and time them."""
    result = PhaseResult(name)
    shares = [[n for n in storm.notifications if n.thread == t] for t in range(THREADS)]
    barrier = threading.Barrier(THREADS + 1)
    deadline = time.monotonic() + PHASE_DEADLINE_S
    partial = [PhaseResult(name) for _ in range(THREADS)]
    threads = [
        threading.Thread(
            target=worker, args=(share, part, barrier, deadline), name=f"{name}-{t}", daemon=True
        )
        for t, (share, part) in enumerate(zip(shares, partial, strict=True))
    ]
    for t in threads:
        t.start()
    try:
        barrier.wait(timeout=60)
    except threading.BrokenBarrierError:
        result.failures.append("client threads did not get ready within 60s")
    started = time.perf_counter()
    for t in threads:
        t.join(timeout=max(0.1, deadline - time.monotonic() + 5))
    result.wall_s = time.perf_counter() - started
    if any(t.is_alive() for t in threads):
        result.failures.append(f"phase did not finish within {PHASE_DEADLINE_S:.0f}s")
    for part in partial:
        result.alerts += part.alerts
        result.latencies += part.latencies
        result.failures += part.failures
        result.warnings += part.warnings
    return result


def _ready(barrier: threading.Barrier, result: PhaseResult) -> bool:
    try:
        barrier.wait(timeout=60)
    except threading.BrokenBarrierError:
        result.failures.append("start barrier broken")
        return False
    return True


def webhook_client(
    url: str, base: str
) -> Callable[[list[Notification], PhaseResult, threading.Barrier, float], None]:
    def work(
        share: list[Notification], result: PhaseResult, barrier: threading.Barrier, deadline: float
    ) -> None:
        with requests.Session() as session:
            session.trust_env = False  # 127.0.0.1 only: never through a proxy
            session.headers.update(
                {
                    "Authorization": f"Bearer {TOKEN}",
                    "Content-Type": "application/json",
                    "User-Agent": "Alertmanager/0.28.1 (bench)",
                }
            )
            try:
                session.get(f"{base}/healthz", timeout=REQUEST_TIMEOUT)  # warm up
            except requests.RequestException as exc:
                result.warnings.append(f"warm-up request failed: {exc}")
            if not _ready(barrier, result):
                return
            for note in share:
                if time.monotonic() > deadline or len(result.failures) >= MAX_FAILURES_PER_THREAD:
                    result.failures.append("stopped early (deadline or too many failures)")
                    return
                t0 = time.perf_counter()
                try:
                    resp = session.post(url, data=note.body, timeout=REQUEST_TIMEOUT)
                except requests.RequestException as exc:
                    result.failures.append(f"group {note.group} {note.event}: {exc}")
                    continue
                result.latencies.append(time.perf_counter() - t0)
                if resp.status_code != 200:
                    result.failures.append(
                        f"group {note.group} {note.event}: HTTP {resp.status_code} "
                        f"{resp.text[:300]}"
                    )
                    continue
                result.alerts += len(note.rows)
                try:
                    received = resp.json().get("received")
                except ValueError:
                    received = None
                if received != len(note.rows):
                    result.warnings.append(
                        f"group {note.group} {note.event}: received={received!r}, "
                        f"sent {len(note.rows)}"
                    )

    return work


UPSERT = """
INSERT INTO incidents_alert (
    fingerprint, starts_at, alertname, status, severity, labels, annotations, ends_at,
    generator_url, grouping_key, incident_id, first_received_at, last_received_at,
    receive_count
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, NULL, now(), now(), 1)
ON CONFLICT (fingerprint, starts_at) DO UPDATE SET
    status = EXCLUDED.status,
    severity = EXCLUDED.severity,
    labels = EXCLUDED.labels,
    annotations = EXCLUDED.annotations,
    ends_at = EXCLUDED.ends_at,
    generator_url = EXCLUDED.generator_url,
    last_received_at = EXCLUDED.last_received_at,
    receive_count = incidents_alert.receive_count + 1
"""


def baseline_client(
    dbname: str,
) -> Callable[[list[Notification], PhaseResult, threading.Barrier, float], None]:
    def work(
        share: list[Notification], result: PhaseResult, barrier: threading.Barrier, deadline: float
    ) -> None:
        try:
            conn = psycopg.connect(dsn(dbname), autocommit=True, connect_timeout=5)
        except psycopg.Error as exc:
            result.failures.append(f"baseline connection failed: {exc}")
            barrier.abort()
            return
        with conn:
            conn.execute("SET statement_timeout = '60s'")
            if not _ready(barrier, result):
                return
            for note in share:
                if time.monotonic() > deadline:
                    result.failures.append("baseline stopped at the deadline")
                    return
                t0 = time.perf_counter()
                try:
                    with conn.transaction(), conn.cursor() as cur:
                        cur.executemany(UPSERT, note.rows)
                except psycopg.Error as exc:
                    result.failures.append(f"baseline group {note.group}: {exc}")
                    return
                result.latencies.append(time.perf_counter() - t0)
                result.alerts += len(note.rows)

    return work


# --- gunicorn ---------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"


def start_gunicorn(tmp: Path, port: int) -> tuple[subprocess.Popen, Path]:
    log_path = tmp / "gunicorn.log"
    var_dir = tmp / "var-console"
    (var_dir / "staticfiles").mkdir(parents=True, exist_ok=True)  # whitenoise warns if absent
    cmd = [
        str(GUNICORN),
        "console.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "2",
        # gunicorn's control socket defaults to ~/.gunicorn/gunicorn.ctl, shared with any
        # other gunicorn of this user (a later one unlinks an earlier one's socket).
        "--no-control-socket",
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            env=console_env(CONSOLE_DB, var_dir),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    with requests.Session() as session:
        session.trust_env = False
        while True:
            if proc.poll() is not None:
                raise BenchError(
                    f"gunicorn exited with {proc.returncode} before answering:\n" + _tail(log_path)
                )
            try:
                if session.get(f"{base}/healthz", timeout=1).status_code == 200:
                    return proc, log_path
            except requests.RequestException:
                pass  # not listening yet
            if time.monotonic() > deadline:
                raise BenchError(
                    f"gunicorn did not answer /healthz within {STARTUP_DEADLINE_S:.0f}s:\n"
                    + _tail(log_path)
                )
            time.sleep(0.1)  # poll interval


def peak_rss(master_pid: int) -> list[tuple[str, int, int]]:
    """(role, pid, VmHWM in KiB) for the gunicorn master and each of its workers."""
    try:
        children = psutil.Process(master_pid).children(recursive=True)
    except psutil.Error:
        children = []
    out = []
    for role, pid in [("master", master_pid)] + [("worker", c.pid) for c in children]:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                out.append((role, pid, int(line.split()[1])))
    return out


def stop_gunicorn(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        children = []
    proc.send_signal(signal.SIGTERM)  # graceful: the master stops its workers
    try:
        proc.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    _, alive = psutil.wait_procs(children, timeout=5)
    for child in alive:
        child.kill()


# --- report -----------------------------------------------------------------------------
def report(
    storm: Storm,
    console: PhaseResult,
    baseline: PhaseResult,
    rss: list[tuple[str, int, int]],
    counts: dict[str, dict],
) -> None:
    total = sum(len(n.rows) for n in storm.notifications)
    ev, mix = storm.events, storm.alert_mix
    print()
    print(
        f"Alertmanager ingest benchmark: {len(storm.notifications)} payloads x "
        f"{ALERTS_PER_PAYLOAD} alerts = {total} alerts, {THREADS} client threads, seed {SEED}"
    )
    print(
        "storm mix: "
        + ", ".join(f"{ev[k]} {k}" for k in ("new", "refire", "repeat", "partial", "resolve"))
        + f", {ev['late-resolved']} late-resolved re-sends; alerts: {mix['new']} new, "
        f"{mix['re-sent']} re-sent unchanged, {mix['resolved']} status changes; "
        f"{storm.distinct_rows} distinct (fingerprint, startsAt)"
    )
    print()
    header = (
        f"{'path':<34}{'alerts/s':>10}{'payloads/s':>12}{'p50 ms':>9}{'p95 ms':>9}{'wall s':>9}"
    )
    print(header)
    print("-" * len(header))
    for label, r in (
        ("console webhook (gunicorn, 2 wkr)", console),
        ("psycopg upsert baseline", baseline),
    ):
        payloads_s = r.alerts / ALERTS_PER_PAYLOAD / r.wall_s if r.wall_s else 0.0
        print(
            f"{label:<34}{r.alerts_per_s:>10.0f}{payloads_s:>12.1f}"
            f"{r.percentile(0.5) * 1000:>9.1f}{r.percentile(0.95) * 1000:>9.1f}{r.wall_s:>9.2f}"
        )
    ratio = console.alerts_per_s / baseline.alerts_per_s if baseline.alerts_per_s else 0.0
    verdict = "meets" if ratio >= 0.5 else "BELOW"
    print(f"{'ratio console/baseline':<34}{ratio:>9.2f}x  ({verdict} the 0.5x target)")
    print()
    if rss:
        parts = [f"{role} {kib / 1024:.1f}" for role, _, kib in rss]
        print(
            "gunicorn peak RSS (VmHWM, MiB): "
            + " | ".join(parts)
            + f" | sum {sum(k for _, _, k in rss) / 1024:.1f} (shared pages counted per process)"
        )
    for db, c in counts.items():
        states = ", ".join(f"{k} {v}" for k, v in sorted(c["status"].items()))
        print(f"rows in {db}: {c['rows']} alerts ({states}), {c['incidents']} incidents")


def verify(storm: Storm, counts: dict[str, dict]) -> tuple[list[str], list[str]]:
    failures, warnings = [], []
    expected_status = dict(storm.final_status)
    for db, c in counts.items():
        if c["rows"] != storm.distinct_rows:
            failures.append(f"{db}: {c['rows']} alert rows, expected {storm.distinct_rows}")
        elif c["status"] != expected_status:
            warnings.append(f"{db}: alert statuses {c['status']}, expected {expected_status}")
    return failures, warnings


def main() -> int:
    if not GUNICORN.exists():
        raise BenchError(f"{GUNICORN} not found: run `make venv` first")
    storm = build_storm(PAYLOADS, SEED)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    created: list[str] = []
    server: subprocess.Popen | None = None
    try:
        for name in (CONSOLE_DB, BASELINE_DB):
            reset_database(name)
            created.append(name)
        migrate([CONSOLE_DB, BASELINE_DB], tmp)

        baseline = run_phase("baseline", storm, baseline_client(BASELINE_DB))

        port = free_port()
        server, log_path = start_gunicorn(tmp, port)
        base = f"http://127.0.0.1:{port}"
        console = run_phase("console", storm, webhook_client(base + WEBHOOK_PATH, base))
        rss = peak_rss(server.pid)
        stop_gunicorn(server)
        server = None

        counts = {CONSOLE_DB: table_counts(CONSOLE_DB), BASELINE_DB: table_counts(BASELINE_DB)}
        report(storm, console, baseline, rss, counts)
        failures, warnings = verify(storm, counts)
        failures = console.failures + baseline.failures + failures
        warnings = console.warnings + baseline.warnings + warnings
        for w in warnings[:10]:
            print(f"warning: {w}")
        if failures:
            print(f"\nFAILED: {len(failures)} problem(s); first ones:")
            for f in failures[:10]:
                print(f"  {f}")
            if console.failures:
                print(f"gunicorn log tail:\n{_tail(log_path)}")
            return 1
        print("\nOK: every webhook answer was 200 and both paths stored the same rows.")
        return 0
    finally:
        if server is not None:
            stop_gunicorn(server)
        for name in created:
            try:
                drop_database(name)
            except psycopg.Error as exc:
                print(f"warning: could not drop database {name}: {exc}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")  # unwinds through main()'s cleanup


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"bench setup failed: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("bench interrupted; cleaned up", file=sys.stderr)
        sys.exit(130)
