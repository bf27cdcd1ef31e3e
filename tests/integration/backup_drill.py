"""The moving parts of the backup and restore drill (test_backup_restore.py): databases of
the run's own on the suite's PostgreSQL server, the PostgreSQL client tools, a webhook
storm from a few threads that records when each body was acknowledged, and a sign-in.

The processes (gunicorn as production runs it) come from tests/bench/stack.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import psycopg
import requests
from django.conf import settings
from psycopg import sql

ROOT = Path(__file__).resolve().parents[2]
PG_TOOLS = ("pg_dump", "pg_restore")
WEBHOOK_PATH = "/api/v1/alerts/alertmanager"
TOOL_DEADLINE_S = 120.0
REQUEST_DEADLINE_S = 30.0


# --- PostgreSQL ------------------------------------------------------------------------
def missing_tools() -> list[str]:
    return [tool for tool in PG_TOOLS if shutil.which(tool) is None]


def _server() -> dict[str, str]:
    """The suite's PostgreSQL server (the one pytest-django's database is on)."""
    db = settings.DATABASES["default"]
    return {
        "host": db.get("HOST") or "127.0.0.1",
        "port": str(db.get("PORT") or 5432),
        "user": db.get("USER") or "postgres",
        "password": db.get("PASSWORD") or "",
    }


def database_url(name: str) -> str:
    s = _server()
    auth = quote(s["user"], safe="")
    if s["password"]:
        auth += ":" + quote(s["password"], safe="")
    return f"postgres://{auth}@{s['host']}:{s['port']}/{name}"


def libpq_env() -> dict[str, str]:
    """The client tools' connection settings, so no password is on a command line."""
    s = _server()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(PGHOST=s["host"], PGPORT=s["port"], PGUSER=s["user"], PGCONNECT_TIMEOUT="5")
    if s["password"]:
        env["PGPASSWORD"] = s["password"]
    return env


def _admin(statement: sql.Composable) -> None:
    with psycopg.connect(database_url("postgres"), autocommit=True, connect_timeout=5) as conn:
        conn.execute(statement)


def database_create(name: str) -> None:
    """A new, empty database (a leftover of a killed run of the same pid is dropped)."""
    database_drop(name)
    _admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def database_drop(name: str) -> None:
    _admin(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def query(name: str, statement: str, params: Sequence = ()) -> list[tuple]:
    with psycopg.connect(database_url(name), connect_timeout=5) as conn:
        return conn.execute(statement, params).fetchall()


def receipt_bodies(name: str) -> dict[int, bytes]:
    """Every webhook receipt's body as received, by receipt id."""
    rows = query(name, "SELECT id, body, body_raw FROM incidents_webhookreceipt")
    return {pk: bytes(raw) if raw is not None else body.encode() for pk, body, raw in rows}


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        args, env=libpq_env(), capture_output=True, text=True, timeout=TOOL_DEADLINE_S
    )
    assert proc.returncode == 0, f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr}"
    return proc


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`manage.py <args>` as an operator runs it, with the console's environment `env`."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=TOOL_DEADLINE_S,
    )  # fmt: skip


# --- the storm -------------------------------------------------------------------------
@dataclass(frozen=True)
class Ack:
    """A body the console answered 2xx, and when (time.monotonic()) the answer came."""

    body: bytes
    answered: float
    receipt: int | None
    incidents: tuple[int, ...]


@dataclass
class Ledger:
    """What the storm's threads saw, shared under one condition."""

    acked: list[Ack] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # non-2xx answers and transport errors
    running: int = 0
    cond: threading.Condition = field(default_factory=threading.Condition)

    def record(self, ack: Ack | None, refusal: str = "") -> None:
        with self.cond:
            if ack is not None:
                self.acked.append(ack)
            else:
                self.refused.append(refusal)
            self.cond.notify_all()

    def wait(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        """Until `done()` (called under the lock) or every thread has finished."""
        with self.cond:
            if not self.cond.wait_for(lambda: done() or not self.running, timeout):
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _post_in_order(base: str, token: str, bodies: Sequence[bytes], ledger: Ledger, stop):
    """One Alertmanager-like sender: its groups' notifications one after another."""
    try:
        with requests.Session() as session:
            session.trust_env = False
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            for body in bodies:
                if stop.is_set():
                    return
                try:
                    r = session.post(
                        base + WEBHOOK_PATH, data=body, headers=headers, timeout=REQUEST_DEADLINE_S
                    )
                except requests.RequestException as exc:
                    ledger.record(None, f"{type(exc).__name__}: {exc}")
                    continue
                answered = time.monotonic()
                if not r.ok:
                    ledger.record(None, f"{r.status_code}: {r.text[:200]}")
                    continue
                data = r.json()
                ack = Ack(body, answered, data.get("receipt"), tuple(data.get("incidents", ())))
                ledger.record(ack)
    finally:
        with ledger.cond:
            ledger.running -= 1
            ledger.cond.notify_all()


@dataclass
class StormWithDump:
    ledger: Ledger
    dump_started: float
    dump_finished: float


def storm_with_dump(
    base: str,
    token: str,
    queues: Sequence[Sequence[bytes]],
    dump: Callable[[], None],
    *,
    acked_before: int,
    acked_after: int,
    deadline_s: float = 90.0,
) -> StormWithDump:
    """Post each queue from a thread of its own; once `acked_before` bodies are
    acknowledged, run `dump()` while the storm goes on, and stop the storm once
    `acked_after` more were acknowledged after the dump finished."""
    ledger, stop = Ledger(), threading.Event()
    threads = [
        threading.Thread(target=_post_in_order, args=(base, token, q, ledger, stop), daemon=True)
        for q in queues
    ]
    ledger.running = len(threads)
    for t in threads:
        t.start()
    try:
        ledger.wait(lambda: len(ledger.acked) >= acked_before, deadline_s, "the storm to start")
        started = time.monotonic()
        dump()
        finished = time.monotonic()
        ledger.wait(
            lambda: sum(a.answered > finished for a in ledger.acked) >= acked_after,
            deadline_s,
            "the storm to go on after the dump",
        )
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=REQUEST_DEADLINE_S + 5)
    return StormWithDump(ledger, started, finished)


# --- the console -----------------------------------------------------------------------
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_LIST_TOTAL = re.compile(r"\d+\s*\u2013\s*\d+\s+of\s+([\d,]+)")  # an en dash


def signed_in(base: str, username: str, password: str) -> requests.Session:
    """A session signed in through the console's password form (as a browser does)."""
    session = requests.Session()
    session.trust_env = False
    page = session.get(base + "/login/", timeout=REQUEST_DEADLINE_S)
    assert page.status_code == 200, page.text[:500]
    token = _CSRF.search(page.text)
    assert token, "the sign-in page has no CSRF token"
    answer = session.post(
        base + "/login/",
        data={"csrfmiddlewaretoken": token.group(1), "username": username, "password": password},
        headers={"Referer": base + "/login/"},
        allow_redirects=False,
        timeout=REQUEST_DEADLINE_S,
    )
    assert answer.status_code == 302, f"sign-in refused ({answer.status_code})"
    return session


def list_total(html: str) -> int:
    """The incident list's total ("1-25 of N", with an en dash)."""
    found = _LIST_TOTAL.search(html)
    assert found, "the incident list shows no count"
    return int(found.group(1).replace(",", ""))
