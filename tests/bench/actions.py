"""Action benchmark (a benchmark, not a test; run it with `make bench`).

Click -> Kubernetes PATCH: a responder's API request for a `scale_lws` run (the same call
the confirmation dialog makes) until the simulator records the write, through the whole
path: gunicorn + PostgreSQL (request service, preview with a server dry run), Redis, a real
Celery worker (claim, read, plan, write). Baseline, in the same run: the same PATCH made
directly with the official kubernetes client, timed the same way (call start -> the
simulator's record of the write). Prints p50/p95 for both and their ratio (target <= 3x).

Environment: BENCH_ACTION_RUNS (50), BENCH_PG_HOST (127.0.0.1), BENCH_PG_PORT (5432),
BENCH_REDIS_URL (redis://127.0.0.1:6379/14).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import requests
from kubernetes import client, config
from kubernetes.client.rest import ApiException

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: make tests.helpers importable

from tests.helpers import free_port, wait_for  # noqa: E402

BIN = REPO / ".venv" / "bin"
RUNS = int(os.environ.get("BENCH_ACTION_RUNS", "50"))
PG = (os.environ.get("BENCH_PG_HOST", "127.0.0.1"), int(os.environ.get("BENCH_PG_PORT", "5432")))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
# Own database and Redis keys per run: nothing another run (or the suite) uses is touched.
DB = f"bench_actions_{os.getpid()}"
KEY_PREFIX = f"bench-actions-{os.getpid()}:"
TOKEN = "bench-actions-token"
NS, LWS = "llm-serving", "vllm-chat"


def wait(check, what: str, timeout: float = 60.0):
    return wait_for(check, timeout=timeout, what=what, every=0.05)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Stack:
    def __init__(self, tmp: Path) -> None:
        self.tmp, self.procs = tmp, []
        self.sim_port, self.web_port = free_port(), free_port()
        self.sim = f"http://127.0.0.1:{self.sim_port}"
        self.web = f"http://127.0.0.1:{self.web_port}"
        self.kubeconfig = tmp / "kubeconfig"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "ACTIONS_"))},
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": f"postgres://postgres@{PG[0]}:{PG[1]}/{DB}",
            "CELERY_BROKER_URL": REDIS_URL,
            "CELERY_BROKER_KEY_PREFIX": KEY_PREFIX,
            "SECRET_KEY": "bench",
            "ALERTMANAGER_TOKEN": TOKEN,
            "VAR_DIR": str(tmp),
            "KUBECONFIG": str(self.kubeconfig),
            "LOG_LEVEL": "WARNING",
            "ACTIONS_VERIFY_SECONDS": "5",
            # Plain HTTP to 127.0.0.1: no HTTPS redirect or secure-only cookies.
            "SECURE_SSL_REDIRECT": "0",
            "SECURE_COOKIES": "0",
        }

    def start(self, name: str, args: list[str]) -> None:
        log = open(self.tmp / f"{name}.log", "w")  # noqa: SIM115
        self.procs.append(
            subprocess.Popen(args, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        )

    def manage(self, *args: str) -> str:
        out = subprocess.run(
            [str(BIN / "python"), "manage.py", *args],
            cwd=REPO, env=self.env, check=True, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        return out.stdout

    def up(self) -> None:
        with psycopg.connect(host=PG[0], port=PG[1], user="postgres", autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            c.execute(f"CREATE DATABASE {DB}")
        import redis

        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(match=KEY_PREFIX + "*"):
            client.delete(key)
        self.manage("migrate", "--verbosity", "0")
        self.start("simulator", [str(BIN / "python"), "-m", "simulator", "serve", "--port",
                                 str(self.sim_port), "--kubeconfig", str(self.kubeconfig),
                                 "--startup-delay", "1"])  # fmt: skip
        wait(lambda: requests.get(self.sim + "/sim/status", timeout=1).ok, "the simulator")
        web = [str(BIN / "gunicorn"), "config.wsgi:application", "--workers", "2",
               "--threads", "4", "--bind", f"127.0.0.1:{self.web_port}"]  # fmt: skip
        self.start("web", web)
        worker = [str(BIN / "celery"), "-A", "config", "worker",
                  "-Q", "default,actions,notifications",
                  "--concurrency", "1", "--loglevel", "WARNING"]  # fmt: skip
        self.start("worker", worker)
        wait(lambda: requests.get(self.web + "/readyz", timeout=1).ok, "the web server")

    def down(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        with psycopg.connect(host=PG[0], port=PG[1], user="postgres", autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        import redis

        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(match=KEY_PREFIX + "*"):
            client.delete(key)

    def writes_since(self, start: float) -> list[dict]:
        # The history is bounded, so look for writes by time, not by position.
        return [c for c in self.writes() if c["epoch"] >= start]

    def writes(self) -> list[dict]:
        r = requests.get(f"{self.sim}/sim/history?resource=leaderworkersets&name={LWS}", timeout=5)
        # Only writes made with the worker's credentials: the fleet's own status updates
        # are writes too, by the simulated controllers.
        return [c for c in r.json()["changes"] if "console-worker" in c["actor"]]


def incident_and_token(stack: Stack) -> tuple[int, str]:
    made = stack.manage("shell", "-c", (
        "from django.contrib.auth.models import User, Group; from console import roles;"
        "from console.api_tokens.services import api_token_issue;"
        "roles.roles_sync(); u = User.objects.create_user('bench');"
        "u.groups.add(Group.objects.get(name=roles.RESPONDER));"
        "print(api_token_issue(user=u, client='bench')[1])"
    ))  # fmt: skip
    token = made.split()[-1]
    labels = {"alertname": "VLLMKVCachePressure", "severity": "warning", "namespace": NS,
              "lws": LWS, "runbook": "long-context-kv", "pod": f"{LWS}-0"}  # fmt: skip
    body = {"version": "4", "status": "firing", "receiver": "console", "groupKey": "bench",
            "groupLabels": {}, "commonLabels": labels, "commonAnnotations": {},
            "externalURL": "http://am", "truncatedAlerts": 0,
            "alerts": [{"status": "firing", "labels": labels, "annotations": {},
                        "startsAt": "2026-11-29T10:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
                        "generatorURL": "", "fingerprint": "00000000000000aa"}]}  # fmt: skip
    r = requests.post(stack.web + "/api/v1/alerts/alertmanager", json=body, timeout=10,
                      headers={"Authorization": f"Bearer {TOKEN}"})  # fmt: skip
    r.raise_for_status()
    return r.json()["incidents"][0], token


def replicas(stack: Stack) -> int:
    """The pool's replicas now (4 or 5): each run flips it, so none is a no-op."""
    api_client = config.new_client_from_config(config_file=str(stack.kubeconfig))
    lws = ("leaderworkerset.x-k8s.io", "v1", NS, "leaderworkersets", LWS)
    scale = client.CustomObjectsApi(api_client).get_namespaced_custom_object_scale(
        *lws, _request_timeout=5
    )
    return int(scale["spec"]["replicas"])


def click_runs(stack: Stack, incident: int, token: str) -> tuple[list[float], list[float]]:
    """(click -> write seen, click -> API answered) per run."""
    api = requests.Session()
    api.headers["Authorization"] = f"Token {token}"
    times, answered = [], []
    for _ in range(RUNS):
        params = {"namespace": NS, "lws": LWS, "replicas": 9 - replicas(stack)}
        body = {"kind": "scale_lws", "idempotency_key": uuid.uuid4().hex, "params": params}
        start = time.time()
        r = api.post(f"{stack.web}/api/v1/incidents/{incident}/actions/", json=body, timeout=30)
        answered.append(time.time() - start)
        if r.status_code != 201:
            raise SystemExit(f"bench: request answered {r.status_code}: {r.text[:300]}")
        run = r.json()["id"]

        def ended(run=run):
            return not api.get(f"{stack.web}/api/v1/actions/{run}/").json()["active"]

        def written_or_ended(t=start):
            done = ended()  # first: a run that ended before this history read has its write in it
            return stack.writes_since(t) or done

        write = wait(written_or_ended, "the worker's PATCH", 60)
        if write is True:
            detail = api.get(f"{stack.web}/api/v1/actions/{run}/").json()
            events = [e["message"] for e in detail["events"]]
            raise SystemExit(f"bench: run {run} ({detail['status']}) wrote nothing: {events}")
        times.append(write[0]["epoch"] - start)
        wait(ended, "the run to end")
    return times, answered


def direct_runs(stack: Stack) -> list[float]:
    """Read the scale subresource and PATCH it guarded by its resourceVersion (re-reading on
    409, as the fleet's status writes move it): what a careful script would do."""
    api_client = config.new_client_from_config(config_file=str(stack.kubeconfig))
    custom = client.CustomObjectsApi(api_client)
    lws = ("leaderworkerset.x-k8s.io", "v1", NS, "leaderworkersets", LWS)
    times = []
    for i in range(RUNS):
        start = time.time()
        for _ in range(5):
            scale = custom.get_namespaced_custom_object_scale(*lws, _request_timeout=5)
            body = {
                "metadata": {"resourceVersion": scale["metadata"]["resourceVersion"]},
                "spec": {"replicas": 4 + i % 2},
            }
            try:
                custom.patch_namespaced_custom_object_scale(*lws, body, _request_timeout=5)
                break
            except ApiException as exc:
                if exc.status != 409:
                    raise
        write = wait(lambda t=start: stack.writes_since(t), "the direct PATCH", timeout=10)
        times.append(write[0]["epoch"] - start)
    return times


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-actions-") as tmp:
        stack = Stack(Path(tmp))
        try:
            stack.up()
            incident, token = incident_and_token(stack)
            direct = direct_runs(stack)
            clicks, answered = click_runs(stack, incident, token)
        finally:
            stack.down()
            if os.environ.get("BENCH_KEEP_LOGS"):
                subprocess.run(["cp", "-r", tmp, "/tmp/bench-actions-logs"], check=False)
    pairs = (("click", clicks), ("direct", direct), ("answered", answered))
    ms = {name: [v * 1000 for v in vals] for name, vals in pairs}
    print(f"\nAction bench: {RUNS} scale_lws runs, click -> PATCH seen by the simulator")
    print(f"  {'path':<34}{'p50 ms':>10}{'p95 ms':>10}{'mean ms':>10}")
    rows = (
        ("click", "console (API -> worker -> PATCH)"),
        ("answered", "  of which: API answered"),
        ("direct", "direct client GET + PATCH"),
    )
    for name, label in rows:
        v = ms[name]
        print(f"  {label:<34}{pct(v, 0.5):>10.1f}{pct(v, 0.95):>10.1f}{statistics.mean(v):>10.1f}")
    p50 = pct(ms["click"], 0.5) / pct(ms["direct"], 0.5)
    p95 = pct(ms["click"], 0.95) / pct(ms["direct"], 0.95)
    print(f"  ratio console/direct: p50 {p50:.1f}x, p95 {p95:.1f}x (target <= 3x)")
    from tests.bench.summary import record

    record("actions", "click to PATCH vs the direct GET + PATCH, p50", p50, 3, p50 <= 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
