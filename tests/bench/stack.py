"""What the ingest benches share: their own PostgreSQL databases, the console's
environment, and the processes production runs (gunicorn, a Celery worker), each started
on a free 127.0.0.1 port, waited for with a deadline and stopped with its children.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg
import requests
from psycopg import sql

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv" / "bin"
PYTHON = VENV_BIN / "python"
GUNICORN = VENV_BIN / "gunicorn"
CELERY = VENV_BIN / "celery"

PG_HOST = os.environ.get("BENCH_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("BENCH_PG_PORT", "5432"))
PG_USER = "postgres"
TOKEN = "bench-token"
WEBHOOK_PATH = "/api/v1/alerts/alertmanager"

STARTUP_DEADLINE_S = 60.0
MIGRATE_DEADLINE_S = 300.0
STOP_DEADLINE_S = 20.0

# Console settings that must come from the bench, not from the caller's environment.
CONSOLE_ENV_KEYS = {
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_BROKER_KEY_PREFIX",
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
    "WEB_CONCURRENCY",
}


class BenchError(RuntimeError):
    """Setup or teardown went wrong (as opposed to a measured failure)."""


# --- PostgreSQL -------------------------------------------------------------------------
def dsn(dbname: str) -> str:
    return f"postgres://{PG_USER}@{PG_HOST}:{PG_PORT}/{dbname}"


def _admin() -> psycopg.Connection:
    return psycopg.connect(
        host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres", autocommit=True,
        connect_timeout=5,
    )  # fmt: skip


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


def console_env(dbname: str, var_dir: Path, **extra: str) -> dict[str, str]:
    """The console's environment for one bench database (production settings, plain
    HTTP on 127.0.0.1); `extra` adds or overrides (e.g. a Redis broker)."""
    env = {k: v for k, v in os.environ.items() if k not in CONSOLE_ENV_KEYS}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
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
    env.update(extra)
    return env


def log_count(path: Path, needle: bytes) -> int:
    """How many finished tasks a Celery log at -l info shows whose line has `needle`."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return 0
    return sum(1 for ln in lines if needle in ln and b" succeeded " in ln)


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"


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
            failed.append(f"{name}: exit {proc.returncode}\n{tail(Path(log.name))}")
    if failed:
        raise BenchError("manage.py migrate failed:\n" + "\n".join(failed))


def alert_rows_digest(dbname: str) -> tuple[int, str]:
    """(row count, md5 of every alert's stored content in key order): two databases that
    hold the same alerts, whatever wrote them, give the same pair."""
    with psycopg.connect(dsn(dbname), connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT count(*), md5(coalesce(string_agg(concat_ws('|', fingerprint, "
            "starts_at, status, ends_at, severity, labels::text, annotations::text, "
            "generator_url, grouping_key), E'\\n' ORDER BY fingerprint, starts_at), '')) "
            "FROM incidents_alert"
        ).fetchone()
    return row[0], row[1]


# --- processes --------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(
    args: Sequence[str], env: dict[str, str], log_path: Path, port: int
) -> subprocess.Popen:
    """gunicorn with `args` (bind included), once /healthz answers 200."""
    (Path(env["VAR_DIR"]) / "staticfiles").mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(GUNICORN), *args], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    with requests.Session() as session:
        session.trust_env = False
        while True:
            if proc.poll() is not None:
                raise BenchError(
                    f"gunicorn exited with {proc.returncode} before answering:\n" + tail(log_path)
                )
            try:
                if session.get(f"{base}/healthz", timeout=1).status_code == 200:
                    return proc
            except requests.RequestException:
                pass  # not listening yet
            if time.monotonic() > deadline:
                stop(proc)
                raise BenchError(
                    f"gunicorn did not answer /healthz within {STARTUP_DEADLINE_S:.0f}s:\n"
                    + tail(log_path)
                )
            time.sleep(0.1)  # poll interval


def start_worker(env: dict[str, str], log_path: Path, args: Sequence[str]) -> subprocess.Popen:
    """A Celery worker, once it answers a ping (within the startup deadline)."""
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(CELERY), "-A", "config", "worker", *args],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while b"ready." not in log_path.read_bytes():
        if proc.poll() is not None:
            raise BenchError(f"celery worker exited with {proc.returncode}:\n" + tail(log_path))
        if time.monotonic() > deadline:
            stop(proc)
            raise BenchError("celery worker was not ready in time:\n" + tail(log_path))
        time.sleep(0.1)  # poll interval
    return proc


def process_tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def memory_kib(pid: int, field: str = "VmHWM") -> int:
    """Sum of `field` (VmHWM: peak RSS; VmRSS: current) over a process and its children,
    in KiB (shared pages are counted once per process)."""
    total = 0
    for proc in process_tree(pid):
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(f"{field}:"):
                total += int(line.split()[1])
    return total


def cpu_seconds(pids: Sequence[int]) -> dict[int, float]:
    """User + system CPU seconds each of these processes has used so far."""
    out = {}
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        out[pid] = times.user + times.system
    return out


def backend_pids(dbname: str) -> list[int]:
    """The PostgreSQL server processes serving `dbname` (local server only)."""
    with psycopg.connect(dsn("postgres"), autocommit=True, connect_timeout=5) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", (dbname,)
        ).fetchall()
    return [pid for (pid,) in rows]


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM (a graceful stop of the master and its children), then kill after the
    deadline; children that outlive their master are killed too."""
    if proc.poll() is not None:
        return
    children = process_tree(proc.pid)[1:]
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    _, alive = psutil.wait_procs(children, timeout=5)
    for child in alive:
        child.kill()


# --- report -----------------------------------------------------------------------------
@dataclass
class Target:
    """One target of an issue, with its measured value."""

    name: str
    measured: str
    met: bool
    note: str = ""


def print_targets(targets: Sequence[Target]) -> None:
    print("\ntargets:")
    width = max(len(t.name) for t in targets)
    for t in targets:
        note = f"  ({t.note})" if t.note else ""
        print(f"  {'PASS' if t.met else 'MISS'}  {t.name:<{width}}  {t.measured}{note}")
