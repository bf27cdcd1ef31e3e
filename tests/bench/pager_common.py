"""What the pager benches share (tests/bench/pager_latency.py, pager_timing.py).

The stack production runs (deploy/k8s): gunicorn with config.gunicorn_conf, a worker on
default,actions (2 processes), a notifier on notifications (4 processes) and one beat,
on their own PostgreSQL database and Redis key prefix, all on 127.0.0.1. Each Celery
process is started in its own session so that a bench can kill it whole (SIGKILL of the
process group: a pod killed, an OOM) or stop it gracefully (SIGTERM: a rollout).

Pages go to a local ntfy-compatible receiver in the bench process (apprise posts the
JSON message to "/"), which notes when each message arrived and the page it is for (the
page id is the first part of the one-tap acknowledge link's signed token).

The bench process sets its own environment to the console's before Django loads, so it
can set up the pager (users, contact methods, the default team and policy) with the ORM,
read the results and, in-process, make the bare transport call the pages go through.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg
import redis

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run as a script: make tests.bench importable

from tests.bench import stack  # noqa: E402
from tests.bench.summary import record_worded  # noqa: E402

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")
# The escalation tick; default: the setting's own default (config/settings/apps.py).
TICK_SECONDS = float(os.environ.get("BENCH_TICK_SECONDS", "5"))
READY_DEADLINE_S = 90.0  # a Celery process on a loaded 2-CPU machine
WORKER_ARGS = ["-Q", "default,actions", "--concurrency", "2"]
NOTIFIER_ARGS = ["-Q", "notifications", "--concurrency", "4"]
PRIMARY, FALLBACK = "primary", "fallback"  # each person's two ntfy topics, in order
_PAGE_IN_LINK = re.compile(r"/pager/ack/(\d+)\.\d+:")


def pct(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def p50_95_max(values: Sequence[float], scale: float = 1.0, fmt: str = "{:.3f}") -> str:
    parts = [pct(values, 0.5), pct(values, 0.95), max(values) if values else float("nan")]
    return " / ".join(fmt.format(v * scale) for v in parts)


# --- the receiver -------------------------------------------------------------------------
@dataclass(frozen=True)
class Arrival:
    mono: float  # time.monotonic() in the bench process
    wall: float  # time.time(), to compare with the database's timestamps
    topic: str
    title: str
    page_id: int | None  # from the acknowledge link; None: not a page (the bare call)


class Receiver:
    """ntfy's publish API as apprise uses it with a self-hosted server (JSON to "/", or
    a body to "/<topic>"), answering 200 at once and noting each message's arrival."""

    def __init__(self) -> None:
        self.arrivals: list[Arrival] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                mono, wall = time.monotonic(), time.time()
                path = self.path.split("?", 1)[0].strip("/")
                if path:
                    topic, title, text = path, self.headers.get("Title", ""), body.decode()
                else:
                    data = json.loads(body or b"{}")
                    topic, title = data.get("topic", ""), data.get("title", "")
                    text = data.get("message", "")
                found = _PAGE_IN_LINK.search(text)
                page_id = int(found.group(1)) if found else None
                with receiver.lock:
                    receiver.arrivals.append(Arrival(mono, wall, topic, title, page_id))
                answer = json.dumps({"id": "bench", "event": "message", "topic": topic}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def address(self, topic: str) -> str:
        return f"ntfy://127.0.0.1:{self.server.server_port}/{topic}"

    def snapshot(self) -> list[Arrival]:
        with self.lock:
            return list(self.arrivals)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- one bench run: database, environment, processes ---------------------------------------
class Run:
    """Names, environment and processes of one bench run; close() leaves nothing behind
    (processes stopped, database dropped, Redis keys deleted, temporary files removed)."""

    def __init__(self, name: str, **extra_env: str) -> None:
        pid = os.getpid()
        self.db = f"bench_{name}_{pid}"
        self.key_prefix = f"bench-{name}-{pid}:"
        self.tmp = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
        self.port = stack.free_port()
        self.procs: dict[str, subprocess.Popen] = {}
        self.created = False
        self.env = stack.console_env(
            self.db,
            self.tmp / "var",
            CELERY_BROKER_URL=REDIS_URL,
            REDIS_URL=REDIS_URL,
            CELERY_BROKER_KEY_PREFIX=self.key_prefix,
            CACHE_KEY_PREFIX=self.key_prefix,
            LOG_LEVEL="INFO",
            # The local receiver (tests do the same with the setting).
            OUTGOING_URL_ALLOWLIST="127.0.0.1/32",
            FIELD_ENCRYPTION_KEYS="bench-pager-field-encryption-key-000001",
            NOTIFY_CONSOLE_URL=f"http://127.0.0.1:{self.port}",
            PAGER_TICK_SECONDS=f"{TICK_SECONDS:g}",
            TIME_ZONE="UTC",  # the Celery logs' times, read by task_runs()
            **extra_env,
        )

    def django_setup(self) -> None:
        """This process as the console (same settings as its processes), Django loaded."""
        os.environ.update(self.env)
        import django

        django.setup()

    def database_create(self) -> None:
        stack.reset_database(self.db)
        self.created = True
        stack.migrate([self.db], self.tmp)

    # processes
    def start(self) -> None:
        web_log = self.tmp / "web.log"
        args = ["-c", "python:config.gunicorn_conf"]
        args += ["--bind", f"127.0.0.1:{self.port}", "config.wsgi:application"]
        self.procs["web"] = stack.start_gunicorn(args, self.env, web_log, self.port)
        self.start_celery("worker", "notifier", "beat")

    def log(self, name: str) -> Path:
        return self.tmp / f"{name}.log"

    def start_celery(self, *names: str) -> None:
        """Workers, the notifier or beat, each in its own session, started together;
        returns once each says it is up."""
        waits = [self._spawn(name) for name in names]
        deadline = time.monotonic() + READY_DEADLINE_S
        for name, proc, path, needle, before in waits:
            while path.read_bytes().count(needle) <= before:
                if proc.poll() is not None:
                    raise stack.BenchError(
                        f"{name} exited with {proc.returncode}:\n{stack.tail(path)}"
                    )
                if time.monotonic() > deadline:
                    raise stack.BenchError(f"{name} was not up in time:\n{stack.tail(path)}")
                time.sleep(0.05)  # poll interval

    def _spawn(self, name: str) -> tuple[str, subprocess.Popen, Path, bytes, int]:
        pid = os.getpid()
        if name == "beat":
            schedule = self.tmp / "celerybeat-schedule"
            cmd = ["beat", "-l", "info", "--schedule", str(schedule)]
            needle = b"beat: Starting"
        else:
            own = WORKER_ARGS if name == "worker" else NOTIFIER_ARGS
            cmd = ["worker", *own, "-n", f"{name}-{pid}@%h", "-l", "info"]
            needle = b"ready."
        path = self.log(name)
        before = path.read_bytes().count(needle) if path.exists() else 0
        with path.open("ab") as log:
            proc = subprocess.Popen(
                [str(stack.CELERY), "-A", "config", *cmd],
                cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.procs[name] = proc
        return name, proc, path, needle, before

    def kill(self, *names: str) -> None:
        """SIGKILL each process and its children at once (a pod killed, an OOM)."""
        for name in names:
            proc = self.procs.pop(name)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def stop(self, *names: str) -> None:
        """SIGTERM: Celery's warm shutdown (running tasks finish, the rest go back), all
        at once; SIGKILL after stack.STOP_DEADLINE_S."""
        procs = [p for p in (self.procs.pop(n, None) for n in names) if p is not None]
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=stack.STOP_DEADLINE_S)
            # The master if it is still there, and any child that outlived it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def close(self) -> None:
        web = self.procs.pop("web", None)
        if web is not None:
            stack.stop(web)
        self.stop(*self.procs)
        if self.created:
            try:
                stack.drop_database(self.db)
            except psycopg.Error as exc:
                print(f"warning: could not drop database {self.db}: {exc}", file=sys.stderr)
        try:
            client = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
            keys = list(client.scan_iter(match=f"{self.key_prefix}*", count=500))
            if keys:
                client.delete(*keys)
        except redis.RedisError as exc:
            print(
                f"warning: could not delete Redis keys {self.key_prefix}*: {exc}", file=sys.stderr
            )
        if os.environ.get("BENCH_KEEP_LOGS"):
            print(f"logs kept in {self.tmp}", file=sys.stderr)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


# --- the pager's configuration -------------------------------------------------------------
@dataclass(frozen=True)
class Person:
    user_id: int
    username: str
    primary: str  # ntfy topic of the first contact method
    fallback: str  # ... of the second (a page whose first send was cut off goes here)


def pager_setup(receiver: Receiver, steps: Sequence[tuple[str, int]]) -> dict[str, Person]:
    """The default team and its default policy, one "page a person" step per (username,
    then wait minutes) in order; each person with two ntfy contact methods (primary,
    fallback) on the receiver. Plain ORM, as test setup is."""
    from django.contrib.auth import get_user_model

    from pager.models import (
        ContactKind,
        ContactMethod,
        EscalationPolicy,
        EscalationStep,
        StepAction,
        Team,
    )

    team = Team.objects.create(slug="bench", name="Bench", is_default=True)
    policy = EscalationPolicy.objects.create(name="Bench", team=team, is_default=True)
    team.escalation_policy = policy
    team.save(update_fields=["escalation_policy"])
    people: dict[str, Person] = {}
    for position, (username, wait) in enumerate(steps, start=1):
        user = get_user_model().objects.create_user(username=username, password=None)
        team.members.add(user)
        primary, fallback = f"{username}-{PRIMARY}", f"{username}-{FALLBACK}"
        for order, topic in enumerate((primary, fallback), start=1):
            ContactMethod.objects.create(
                user=user, position=order, kind=ContactKind.NTFY, address=receiver.address(topic)
            )
        EscalationStep.objects.create(
            policy=policy, position=position, action=StepAction.PAGE_USER, user=user,
            wait_minutes=wait,
        )  # fmt: skip
        people[username] = Person(user.pk, username, primary, fallback)
    return people


# --- the webhook ---------------------------------------------------------------------------
def group_key(tag: str, n: int) -> str:
    return f'{{}}/{{runbook=~".+"}}:{{alertname="VLLMHighTTFT", bench="{tag}-{n}"}}'


def incident_body(tag: str, n: int) -> bytes:
    """A new group: one firing alert of its own (its own labels, so its own incident),
    as Alertmanager sends it (tests/payloads.py)."""
    from tests import payloads

    lws = f"vllm-bench-{n}"
    alert = payloads.alert(
        pod=f"{lws}-0",
        starts_at=datetime.now(UTC),
        extra_labels={"lws": lws, "bench": f"{tag}-{n}"},
    )
    body = payloads.notification([alert], group_key=group_key(tag, n))
    body["groupLabels"] = {"alertname": "VLLMHighTTFT", "bench": f"{tag}-{n}"}
    return json.dumps(body).encode()


@dataclass(frozen=True)
class Answer:
    n: int
    group_key: str
    mono: float  # when the webhook answered
    wall: float
    seconds: float  # the request's own duration
    status: int


class Webhook:
    """Posts to the console's Alertmanager webhook over one kept-alive connection."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {
            "Authorization": f"Bearer {stack.TOKEN}",
            "Content-Type": "application/json",
            "User-Agent": "Alertmanager/0.28.1 (bench)",
        }

    def new_incident(self, tag: str, n: int) -> Answer:
        body = incident_body(tag, n)
        started = time.monotonic()
        try:
            self.conn.request("POST", stack.WEBHOOK_PATH, body, self.headers)
            resp = self.conn.getresponse()
            resp.read()
            status = resp.status
        except (OSError, http.client.HTTPException):
            self.conn.close()
            status = 0
        mono, wall = time.monotonic(), time.time()
        return Answer(n, group_key(tag, n), mono, wall, mono - started, status)

    def close(self) -> None:
        self.conn.close()


# --- the Celery logs ----------------------------------------------------------------------
_RAN = re.compile(
    rb"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): \w+/[^\]]+\] Task ([\w.]+)\[([^\]]+)\] "
    rb"succeeded in ([0-9.e-]+)s",
    re.MULTILINE,
)


def task_runs(path: Path, task: str) -> dict[str, float]:
    """When each run of `task` in a worker's log (-l info) started, by task id: the
    "succeeded" line's time (milliseconds, TIME_ZONE=UTC) minus its run time."""
    runs: dict[str, float] = {}
    for stamp, name, task_id, took in _RAN.findall(path.read_bytes()):
        if name.decode() == task:
            at = datetime.strptime(stamp.decode(), "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)
            runs[task_id.decode()] = at.timestamp() - float(took)
    return runs


# --- report --------------------------------------------------------------------------------
@dataclass
class Target:
    name: str
    measured: str
    met: bool | None  # None: no target number to meet (reported only)
    note: str = ""


def print_targets(targets: Sequence[Target]) -> None:
    print("\ntargets:")
    width = max(len(t.name) for t in targets)
    for t in targets:
        verdict = "INFO" if t.met is None else ("PASS" if t.met else "MISS")
        note = f"  ({t.note})" if t.note else ""
        print(f"  {verdict}  {t.name:<{width}}  {t.measured}{note}")
        if t.met is not None:
            record_worded(t.name, t.measured, t.met, t.note)


def line(label: str, value: str) -> None:
    print(f"  {label:<64}{value}")


def machine() -> str:
    return f"{os.cpu_count()} CPUs; 1-min load average {os.getloadavg()[0]:.1f} at the start"
