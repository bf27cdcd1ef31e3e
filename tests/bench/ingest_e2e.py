"""End-to-end ingest bench (issue #14): the storm through the stack production runs.

gunicorn as production runs it (config.gunicorn_conf) on its own PostgreSQL database,
one Celery worker on Redis (its own key prefix), 4 client threads posting the storm of
tests/bench/storm.py for 30 s, all on 127.0.0.1. Before the timed storm, a warm-up and a
10k-alert storm measure the web processes' memory. While the storm runs, a poller reads
the incidents table to time when each new group's incident becomes visible. Then the
same notifications go, in the same order per thread, through a raw psycopg upsert of the
same rows into a second database (the in-run baseline), and both databases must hold the
same alert rows.

Prints end-to-end alerts/s, accepted requests/s, request p50/p95, lag p50/p95, peak RSS
and the console/baseline ratio, and each target of issue #14 with PASS or MISS.

Environment: BENCH_STORM_SECONDS (30), BENCH_CLIENTS (4), BENCH_SEED (1),
BENCH_REDIS_URL (redis://127.0.0.1:6379/15), BENCH_WEB_ARGS (extra gunicorn flags, for
trying settings), BENCH_PG_HOST, BENCH_PG_PORT.
Exit status: 0 when every request was answered 2xx and the rows are right; 1 otherwise
(a missed target is reported, not failed); 2 when the bench could not be set up.
"""

from __future__ import annotations

import http.client
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import redis
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: make tests.bench importable

from tests.bench import ingest_e2e_report, stack, storm  # noqa: E402
from tests.bench.ingest_e2e_report import CLIENTS, POLL_EVERY_S, SECONDS  # noqa: E402

SEED = int(os.environ.get("BENCH_SEED", "1"))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")
WEB_ARGS = shlex.split(os.environ.get("BENCH_WEB_ARGS", ""))
CONSOLE_DB = f"bench_e2e_{os.getpid()}"
BASELINE_DB = f"bench_e2e_baseline_{os.getpid()}"
# Enough notifications that no client runs out within the storm at twice the target rate.
PER_CLIENT = int(os.environ.get("BENCH_STORM_MAX_PER_CLIENT", "1500"))
RSS_STORM_BODIES = 200  # 10,000 alerts
WARMUP_BODIES = 12  # per client
REQUEST_TIMEOUT_S = 60.0
MAX_FAILURES = 20


@dataclass
class Sent:
    started: float
    latency: float
    kind: str
    status: int


@dataclass
class Client:
    index: int
    notes: list[storm.Notification]
    done: int = 0  # notifications answered 2xx, in order
    sent: list[Sent] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def post_all(client: Client, port: int, until: float, stop_at: int, posted: dict) -> None:
    """Post the client's notifications in order until `stop_at` or the `until` clock."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    headers = {
        "Authorization": f"Bearer {stack.TOKEN}",
        "Content-Type": "application/json",
        "User-Agent": "Alertmanager/0.28.1 (bench)",
    }
    try:
        while client.done < stop_at and time.monotonic() < until:
            note = client.notes[client.done]
            t0 = time.perf_counter()
            if note.kind == storm.NEW:
                posted.setdefault(note.group_key, t0)
            try:
                conn.request("POST", stack.WEBHOOK_PATH, note.body, headers)
                resp = conn.getresponse()
                text = resp.read()
            except (OSError, http.client.HTTPException) as exc:
                client.failures.append(f"{note.kind} {note.group_key}: {exc!r}")
                conn.close()
                if len(client.failures) >= MAX_FAILURES:
                    return
                continue
            client.sent.append(Sent(t0, time.perf_counter() - t0, note.kind, resp.status))
            if not 200 <= resp.status < 300:
                client.failures.append(f"{note.kind}: HTTP {resp.status} {text[:200]!r}")
                if len(client.failures) >= MAX_FAILURES:
                    return
                continue
            client.done += 1
    finally:
        conn.close()


def run_clients(clients: list[Client], port: int, seconds: float, upto, posted: dict) -> float:
    """All clients at once; returns the wall time from the first post to the last answer."""
    until = time.monotonic() + seconds
    threads = [
        threading.Thread(
            target=post_all, args=(c, port, until, upto(c), posted), daemon=True, name=f"c{c.index}"
        )
        for c in clients
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + REQUEST_TIMEOUT_S + 5)
    if any(t.is_alive() for t in threads):
        raise stack.BenchError("a client thread did not finish")
    return time.perf_counter() - started


class Poller(threading.Thread):
    """Notes when each new group's incident first shows up in the database (the lag).
    Asks for the groups posted and not seen yet: ids are taken in insert order but
    committed in any order, so "ids above the last seen" would miss some."""

    def __init__(self, dbname: str, posted: dict[str, float]) -> None:
        super().__init__(daemon=True, name="poller")
        self.conn = psycopg.connect(stack.dsn(dbname), autocommit=True, connect_timeout=5)
        self.posted = posted
        self.seen: dict[str, float] = {}
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            waiting = [k for k in list(self.posted) if k not in self.seen]
            if waiting:
                rows = self.conn.execute(
                    "SELECT grouping_key FROM incidents_incident WHERE grouping_key = ANY(%s)",
                    (waiting,),
                ).fetchall()
                now = time.perf_counter()
                for (key,) in rows:
                    self.seen.setdefault(key, now)
            self.halt.wait(POLL_EVERY_S)

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=5)
        self.conn.close()


def rows_right(dbname: str, sent: list[storm.Notification]) -> bool:
    """Every incident in the status its group's notifications call for, and every alert
    row there with its last delivered status."""
    expected = storm.expected_state(sent)
    statuses: dict[tuple, str] = {}
    for note in sent:
        for row in note.rows:
            statuses[(row[0], row[1])] = row[3]
    with psycopg.connect(stack.dsn(dbname), connect_timeout=5) as conn:
        incidents = dict(conn.execute("SELECT grouping_key, status FROM incidents_incident"))
        alerts = dict(
            conn.execute("SELECT status, count(*) FROM incidents_alert GROUP BY status").fetchall()
        )
    want = {}
    for status in statuses.values():
        want[status] = want.get(status, 0) + 1
    return incidents == expected and alerts == want


@dataclass
class Triage:
    """Auto-triage after the storm: what is still due, and which incidents got an entry."""

    due: int
    open_untriaged: int
    triaged: int
    incidents: int
    lags: list[float]  # seconds from an incident's opening to its first auto-triage entry
    drains: int = 0  # drain tasks the worker ran (its log)

    @property
    def done(self) -> bool:
        return not self.due and not self.open_untriaged


def runbook_alertnames() -> list[str]:
    """The alert names the catalogue has a runbook for (the others get no auto-triage)."""
    names: list[str] = []
    for path in sorted((REPO / "runbooks" / "catalog").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if isinstance(doc, dict):
            names += doc.get("alerts") or []
    return names


def triage_state(dbname: str) -> Triage:
    with psycopg.connect(stack.dsn(dbname), connect_timeout=5) as conn:
        (due,) = conn.execute("SELECT count(*) FROM runbooks_autotriagedue").fetchone()
        rows = conn.execute(TRIAGE_SQL, {"names": runbook_alertnames()}).fetchall()
    lags = [float(lag) for _, lag in rows if lag is not None]
    untriaged = sum(1 for is_open, lag in rows if is_open and lag is None)
    return Triage(due, untriaged, len(lags), len(rows), lags)


# Per incident a runbook matches: open or not, and seconds from its opening to its first
# auto-triage entry (NULL: none yet).
TRIAGE_SQL = """
SELECT i.status IN ('triggered', 'acknowledged', 'mitigated'),
       extract(epoch FROM min(t.occurred_at) - min(o.occurred_at))
FROM incidents_incident i
JOIN incidents_timelineevent o ON o.incident_id = i.id AND o.kind = 'incident_opened'
LEFT JOIN incidents_timelineevent t ON t.incident_id = i.id AND t.kind = 'auto_triage'
WHERE EXISTS (
    SELECT 1 FROM incidents_alert a WHERE a.incident_id = i.id AND a.alertname = ANY(%(names)s)
)
GROUP BY i.id
"""


UPSERT = """
INSERT INTO incidents_alert (
    fingerprint, starts_at, alertname, status, severity, labels, annotations, ends_at,
    generator_url, grouping_key, incident_id, first_received_at, last_received_at,
    receive_count
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, NULL, now(), now(), 1)
ON CONFLICT (fingerprint, starts_at) DO UPDATE SET
    status = EXCLUDED.status, severity = EXCLUDED.severity, labels = EXCLUDED.labels,
    annotations = EXCLUDED.annotations, ends_at = EXCLUDED.ends_at,
    generator_url = EXCLUDED.generator_url, last_received_at = EXCLUDED.last_received_at,
    receive_count = incidents_alert.receive_count + 1
"""


def baseline(parts: list[tuple[list, list]]) -> float:
    """The raw upsert of the same rows, one transaction per notification (executemany:
    pipelined): each client's untimed part, then its timed part on all clients at once.
    Returns the timed part's wall seconds."""
    errors: list[str] = []
    barrier = threading.Barrier(len(parts) + 1)

    def work(untimed: list, timed: list) -> None:
        try:
            with psycopg.connect(stack.dsn(BASELINE_DB), autocommit=True) as conn:
                for note in untimed:
                    with conn.transaction(), conn.cursor() as cur:
                        cur.executemany(UPSERT, note.rows)
                barrier.wait(timeout=120)
                for note in timed:
                    with conn.transaction(), conn.cursor() as cur:
                        cur.executemany(UPSERT, note.rows)
        except (psycopg.Error, threading.BrokenBarrierError) as exc:
            errors.append(repr(exc))
            barrier.abort()

    threads = [threading.Thread(target=work, args=p, daemon=True) for p in parts]
    for t in threads:
        t.start()
    barrier.wait(timeout=120)
    started = time.perf_counter()
    for t in threads:
        t.join(timeout=600)
    if errors or any(t.is_alive() for t in threads):
        raise stack.BenchError(f"baseline failed: {errors[:3]}")
    return time.perf_counter() - started


def query_counts(tmp: Path) -> dict[str, dict[str, int]]:
    """Queries per body for 1 and 100 alerts (ingest_queries.py, in the baseline's
    database, which it leaves as it was)."""
    env = stack.console_env(BASELINE_DB, tmp / "var-queries", ALLOWED_HOSTS="testserver")
    done = subprocess.run(
        [str(stack.PYTHON), str(REPO / "tests" / "bench" / "ingest_queries.py")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if done.returncode != 0:
        raise stack.BenchError(f"ingest_queries.py failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    load_before = os.getloadavg()[0]
    t_build = time.perf_counter()
    clients = [Client(i, storm.thread_storm(i, PER_CLIENT, SEED)) for i in range(CLIENTS)]
    warm = [Client(i, storm.thread_storm(100 + i, WARMUP_BODIES, SEED)) for i in range(CLIENTS)]
    print(f"storm built in {time.perf_counter() - t_build:.1f} s", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    created: list[str] = []
    web = worker = None
    key_prefix = f"bench-e2e-{os.getpid()}:"
    try:
        for name in (CONSOLE_DB, BASELINE_DB):
            stack.reset_database(name)
            created.append(name)
        stack.migrate([CONSOLE_DB, BASELINE_DB], tmp)
        queries = query_counts(tmp)
        env = stack.console_env(
            CONSOLE_DB, tmp / "var", CELERY_BROKER_URL=REDIS_URL, REDIS_URL=REDIS_URL,
            CELERY_BROKER_KEY_PREFIX=key_prefix, CACHE_KEY_PREFIX=key_prefix, LOG_LEVEL="INFO",
        )  # fmt: skip
        worker = stack.start_worker(
            env,
            tmp / "worker.log",
            ["-Q", "default,actions,notifications", "--concurrency", "2", "-l", "info"],
        )
        port = stack.free_port()
        args = ["-c", "python:config.gunicorn_conf", *WEB_ARGS]
        args += ["--bind", f"127.0.0.1:{port}", "config.wsgi:application"]
        web = stack.start_gunicorn(args, env, tmp / "web.log", port)

        run_clients(warm, port, 60, lambda c: len(c.notes), {})
        rss_before = stack.memory_kib(web.pid, "VmRSS")
        rss_part = RSS_STORM_BODIES // CLIENTS
        run_clients(clients, port, 120, lambda c: rss_part, {})
        rss_after = stack.memory_kib(web.pid, "VmRSS")
        untimed = [c.done for c in clients]
        for c in clients:
            c.sent.clear()

        posted: dict[str, float] = {}
        poller = Poller(CONSOLE_DB, posted)
        poller.start()
        web_pids = [p.pid for p in stack.process_tree(web.pid)]
        worker_pids = [p.pid for p in stack.process_tree(worker.pid)]

        def cpu_now():
            backends = stack.backend_pids(CONSOLE_DB)
            return [stack.cpu_seconds(pids) for pids in (web_pids, backends, worker_pids)]

        cpu_before = cpu_now()
        client_cpu = time.process_time()
        wall = run_clients(clients, port, SECONDS, lambda c: len(c.notes), posted)
        client_cpu = time.process_time() - client_cpu
        cpu_after = cpu_now()
        cpu = [
            sum(after.values()) - sum(before.get(pid, 0.0) for pid in after)
            for before, after in zip(cpu_before, cpu_after, strict=True)
        ] + [client_cpu]
        first = min(s.started for c in clients for s in c.sent)
        sent_notes = [n for c in (*warm, *clients) for n in c.notes[: c.done]]
        deadline = time.monotonic() + 60
        while not rows_right(CONSOLE_DB, sent_notes) and time.monotonic() < deadline:
            time.sleep(0.05)  # poll interval
        right_at = time.perf_counter()
        right = rows_right(CONSOLE_DB, sent_notes)
        triage = triage_state(CONSOLE_DB)
        while not triage.done and time.monotonic() < deadline:
            time.sleep(0.2)  # poll interval: the worker drains what the storm queued
            triage = triage_state(CONSOLE_DB)
        triage.drains = stack.log_count(tmp / "worker.log", b"auto_triage_drain[")
        time.sleep(0.1)  # the poller's last round
        poller.stop()
        rss_end = stack.memory_kib(web.pid, "VmRSS")
        peak_web = stack.memory_kib(web.pid)
        peak_worker = stack.memory_kib(worker.pid)
        stack.stop(web)
        stack.stop(worker)
        web = worker = None

        timed_notes = [c.notes[u : c.done] for c, u in zip(clients, untimed, strict=True)]
        parts = [
            (w.notes[: w.done] + c.notes[:u], t)
            for w, c, u, t in zip(warm, clients, untimed, timed_notes, strict=True)
        ]
        base_wall = baseline(parts)
        same = stack.alert_rows_digest(CONSOLE_DB) == stack.alert_rows_digest(BASELINE_DB)
        return ingest_e2e_report.report(
            clients=clients, wall=wall, e2e=right_at - first, right=right and same,
            poller=poller, posted=posted, base_wall=base_wall,
            timed_alerts=sum(len(n) for n in timed_notes) * storm.ALERTS_PER_BODY,
            rss=(rss_before, rss_after, rss_end), peaks=(peak_web, peak_worker), cpu=cpu,
            logs=tmp, load=load_before, queries=queries, triage=triage,
        )  # fmt: skip
    finally:
        for proc in (web, worker):
            if proc is not None:
                stack.stop(proc)
        for name in created:
            try:
                stack.drop_database(name)
            except psycopg.Error as exc:
                print(f"warning: could not drop database {name}: {exc}", file=sys.stderr)
        drop_redis_keys(key_prefix)
        shutil.rmtree(tmp, ignore_errors=True)


def drop_redis_keys(prefix: str) -> None:
    """The broker's keys of this run only (the Redis database may be shared)."""
    try:
        client = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
        keys = list(client.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            client.delete(*keys)
    except redis.RedisError as exc:
        print(f"warning: could not delete the Redis keys {prefix}*: {exc}", file=sys.stderr)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except stack.BenchError as exc:
        print(f"bench setup failed: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("bench interrupted; cleaned up", file=sys.stderr)
        sys.exit(130)
