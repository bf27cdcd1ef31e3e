"""Alert-ingestion benchmark (a benchmark, not a test; run it with `make bench`).

`ingest.py --e2e` runs the end-to-end storm of issue #14 instead (tests/bench/ingest_e2e.py:
gunicorn, a Celery worker, 4 clients for 30 s, lag and memory, each target PASS/MISS).

Posts a deterministic Alertmanager "storm" (tests/bench/fleet_storm.py) to the
console's webhook served by gunicorn as production runs it (config.gunicorn_conf) on
PostgreSQL, and, in the same run, upserts the same alert rows straight into the same
table with psycopg: the floor any ingestion path pays. Prints alerts/s for both, their
ratio (target: console/baseline >= 0.5x), request latencies and the peak RSS of the
gunicorn processes; both databases must end with the same alert rows. Like
Alertmanager, one group's notifications are sent in order, never two at once; different
groups go concurrently (2 client threads).

Environment: BENCH_PAYLOADS (1000: about 8 s of posting, enough to hold still),
BENCH_SEED (1), BENCH_PG_HOST (127.0.0.1), BENCH_PG_PORT (5432), BENCH_DEADLINE_S (600,
per phase).
Exit status: 0 unless something failed (an answer other than 200, an error, or rows
that differ between the two phases); a low ratio is reported, not failed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import requests

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: make tests.bench importable

from tests.bench import stack, summary  # noqa: E402
from tests.bench.fleet_storm import (  # noqa: E402
    ALERTS_PER_PAYLOAD,
    THREADS,
    Notification,
    Storm,
    build_storm,
)
from tests.bench.stack import BenchError, dsn  # noqa: E402

# Own databases per run (dropped at the end), so two runs on one server never collide.
CONSOLE_DB = f"bench_{os.getpid()}"
BASELINE_DB = f"bench_baseline_{os.getpid()}"

PAYLOADS = int(os.environ.get("BENCH_PAYLOADS", "1000"))
SEED = int(os.environ.get("BENCH_SEED", "1"))
PHASE_DEADLINE_S = float(os.environ.get("BENCH_DEADLINE_S", "600"))
REQUEST_TIMEOUT = (5.0, 60.0)  # connect, read
RAW_TARGET = 0.5  # issue 29: the webhook at least half as fast as the raw upsert
MAX_FAILURES_PER_THREAD = 20


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
                    "Authorization": f"Bearer {stack.TOKEN}",
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


# --- report -----------------------------------------------------------------------------
def report(
    storm: Storm,
    console: PhaseResult,
    baseline: PhaseResult,
    rss: int,
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
        ("console webhook (gunicorn)", console),
        ("psycopg upsert baseline", baseline),
    ):
        payloads_s = r.alerts / ALERTS_PER_PAYLOAD / r.wall_s if r.wall_s else 0.0
        print(
            f"{label:<34}{r.alerts_per_s:>10.0f}{payloads_s:>12.1f}"
            f"{r.percentile(0.5) * 1000:>9.1f}{r.percentile(0.95) * 1000:>9.1f}{r.wall_s:>9.2f}"
        )
    ratio = console.alerts_per_s / baseline.alerts_per_s if baseline.alerts_per_s else 0.0
    print(f"{'ratio console/baseline':<34}{ratio:>9.2f}x")
    print()
    print(f"gunicorn peak RSS (VmHWM, summed over its processes): {rss / 1024:.0f} MiB")
    for db, c in counts.items():
        states = ", ".join(f"{k} {v}" for k, v in sorted(c["status"].items()))
        print(f"rows in {db}: {c['rows']} alerts ({states}), {c['incidents']} incidents")
    passed = ratio >= RAW_TARGET
    short = f" ({RAW_TARGET - ratio:.2f}x short)" if not passed else ""
    print(
        f"\n{'PASS' if passed else 'MISS'} webhook vs raw psycopg upsert: {ratio:.2f}x "
        f"(target {RAW_TARGET}x){short}"
    )
    summary.record(
        "ingest",
        "webhook vs raw psycopg upsert",
        round(ratio, 2),
        RAW_TARGET,
        passed,
        f"{console.alerts_per_s:.0f} vs {baseline.alerts_per_s:.0f} alerts/s, fleet storm",
        higher_is_better=True,
    )


def verify(storm: Storm, counts: dict[str, dict]) -> tuple[list[str], list[str]]:
    failures, warnings = [], []
    expected_status = dict(storm.final_status)
    for db, c in counts.items():
        if c["rows"] != storm.distinct_rows:
            failures.append(f"{db}: {c['rows']} alert rows, expected {storm.distinct_rows}")
        elif c["status"] != expected_status:
            warnings.append(f"{db}: alert statuses {c['status']}, expected {expected_status}")
    if stack.alert_rows_digest(CONSOLE_DB) != stack.alert_rows_digest(BASELINE_DB):
        failures.append("the console's alert rows differ from the baseline's")
    return failures, warnings


def main() -> int:
    if "--e2e" in sys.argv[1:]:
        from tests.bench import ingest_e2e

        return ingest_e2e.main()
    storm = build_storm(PAYLOADS, SEED)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    created: list[str] = []
    server: subprocess.Popen | None = None
    log_path = tmp / "gunicorn.log"
    try:
        for name in (CONSOLE_DB, BASELINE_DB):
            stack.reset_database(name)
            created.append(name)
        stack.migrate([CONSOLE_DB, BASELINE_DB], tmp)

        baseline = run_phase("baseline", storm, baseline_client(BASELINE_DB))

        port = stack.free_port()
        args = ["-c", "python:config.gunicorn_conf", "--bind", f"127.0.0.1:{port}"]
        env = stack.console_env(CONSOLE_DB, tmp / "var-console")
        server = stack.start_gunicorn([*args, "config.wsgi:application"], env, log_path, port)
        base = f"http://127.0.0.1:{port}"
        console = run_phase("console", storm, webhook_client(base + stack.WEBHOOK_PATH, base))
        rss = stack.memory_kib(server.pid)
        stack.stop(server)
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
                print(f"gunicorn log tail:\n{stack.tail(log_path)}")
            return 1
        print("\nOK: every webhook answer was 200 and both paths stored the same rows.")
        return 0
    finally:
        if server is not None:
            stack.stop(server)
        for name in created:
            try:
                stack.drop_database(name)
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
