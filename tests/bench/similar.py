"""Similar-past-incidents benchmark (a benchmark, not a test; run it with `make bench`).

Creates its own PostgreSQL database for the run (`bench_similar_<pid>`, migrated with
manage.py, dropped at the end), fills it with 1,000 incidents over the eight runbooks
(alerts with namespace, lws, pod and, for some, node labels; succeeded action runs,
postmortems and open action items on some), and times GET
/api/v1/incidents/{id}/similar/ for a new incident that shares its runbook, LWS and node
with many of them: in this process (Django test Client: the real URL, authentication,
selector and serializer), so the time is the server's. Then it grows the history to
100,000 incidents and times the same request for another new incident. Prints p50/p95 per
size, the query count, the ratio of the two p50s (the indexes make each match stop after
a few rows, so it should stay near 1) and the plan of the candidates statement at 100k.

Environment: BENCH_PG_HOST (127.0.0.1), BENCH_PG_PORT (5432), BENCH_SIMILAR_SMALL (1000),
BENCH_SIMILAR_LARGE (100000), BENCH_SEED (1).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv" / "bin" / "python"
PG = (os.environ.get("BENCH_PG_HOST", "127.0.0.1"), int(os.environ.get("BENCH_PG_PORT", "5432")))
DB = f"bench_similar_{os.getpid()}"
SMALL = int(os.environ.get("BENCH_SIMILAR_SMALL", "1000"))
LARGE = int(os.environ.get("BENCH_SIMILAR_LARGE", "100000"))
SEED = int(os.environ.get("BENCH_SEED", "1"))
REQUESTS = 30
BATCH = 5000
T0 = datetime(2024, 12, 1, tzinfo=UTC)
STEP = timedelta(minutes=10)  # one incident every 10 minutes: 100k is about two years
TARGET = {"namespace": "team-a", "lws": "vllm-chat", "node": "gpu-node-07"}
ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "DATABASE_URL": f"postgres://postgres@{PG[0]}:{PG[1]}/{DB}",
    "SECRET_KEY": "bench",
    "ALERTMANAGER_TOKEN": "bench-similar-token",
    "ALLOWED_HOSTS": "testserver,localhost",
    "LOG_LEVEL": "WARNING",
    "DEBUG": "0",
    "SECURE_SSL_REDIRECT": "0",  # the in-process test Client speaks plain HTTP
    "CELERY_BROKER_URL": "memory://",
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def admin_connection() -> psycopg.Connection:
    return psycopg.connect(host=PG[0], port=PG[1], user="postgres", autocommit=True)


def fresh_database() -> None:
    with admin_connection() as c:
        c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {DB}")
    env = {**{k: v for k, v in os.environ.items() if k not in ENV}, **ENV}
    subprocess.run(
        [str(PYTHON), "manage.py", "migrate", "--verbosity", "0"],
        cwd=REPO, env=env, check=True, timeout=600,
    )  # fmt: skip


def drop_database() -> None:
    from django.db import connections

    connections.close_all()
    with admin_connection() as c:
        c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")


def setup_django() -> None:
    os.environ.update(ENV)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()


class History:
    """Incidents appended in time order (ids follow time, as they do in production)."""

    def __init__(self) -> None:
        from django.contrib.auth.models import Group, User

        from console import roles
        from runbooks.catalog import load_catalog

        self.rng = random.Random(SEED)
        self.slugs = [rb.slug for rb in load_catalog().all()]
        self.alertname = {rb.slug: rb.alerts[0] for rb in load_catalog().all()}
        self.namespaces = [f"team-{c}" for c in "abcdef"]
        self.lws = ["vllm-chat", "vllm-code", "vllm-long", "vllm-embed"]
        self.nodes = [f"gpu-node-{n:02d}" for n in range(40)]
        self.count = 0
        self.user = User.objects.create_user("bench-viewer")
        self.user.groups.add(Group.objects.get(name=roles.VIEWER))

    def _labels(self, i: int, slug: str) -> dict:
        labels = {
            "alertname": self.alertname[slug],
            "runbook": slug,
            "namespace": self.rng.choice(self.namespaces),
            "lws": self.rng.choice(self.lws),
            "pod": f"pod-{i % 16}",
        }
        if slug in ("ecc-errors", "nccl-hang") or self.rng.random() < 0.2:
            labels["node"] = self.rng.choice(self.nodes)
        return labels

    def grow(self, n: int, *, labels: dict | None = None, slug: str = "") -> list:
        """Append `n` incidents (given labels and runbook when set: the target)."""
        from actions.models import ActionRun
        from incidents.models import Alert, Incident
        from postmortems.models import ActionItem, Postmortem

        rng, made = self.rng, []
        for first in range(0, n, BATCH):
            incidents, label_sets = [], []
            for _ in range(min(BATCH, n - first)):
                i = self.count
                self.count += 1
                rb = slug or rng.choice(self.slugs)
                lab = {**self._labels(i, rb), **(labels or {})}
                t = T0 + i * STEP
                resolved = None if labels else t + timedelta(minutes=rng.uniform(5, 240))
                incidents.append(
                    Incident(
                        title=f"{lab['alertname']} on {lab['namespace']}/{lab['lws']} ({i})",
                        severity=rng.choice(["SEV1", "SEV2", "SEV3"]), runbook=rb,
                        status="resolved" if resolved else "triggered",
                        grouping_key=f"bench-{i}", namespace=lab["namespace"],
                        triggered_at=t, started_at=t, resolved_at=resolved,
                    )
                )  # fmt: skip
                label_sets.append(lab)
            incidents = Incident.objects.bulk_create(incidents)
            alerts, runs, pms, items = [], [], [], []
            for inc, lab in zip(incidents, label_sets, strict=True):
                for a in range(rng.choice((1, 1, 2, 3))):
                    t = inc.triggered_at + timedelta(seconds=a)
                    alerts.append(
                        Alert(
                            fingerprint=f"{inc.pk:012x}{a:04x}", starts_at=t,
                            alertname=lab["alertname"], status="resolved", severity="critical",
                            labels={**lab, "pod": f"{lab['pod']}-{a}"}, incident=inc,
                            grouping_key=inc.grouping_key, first_received_at=t,
                            last_received_at=t,
                        )
                    )  # fmt: skip
                if inc.resolved_at and rng.random() < 0.3:
                    runs.append(
                        ActionRun(
                            incident=inc, kind="scale_lws", status="succeeded",
                            target=f"leaderworkerset/{lab['namespace']}/{lab['lws']}",
                            params={"replicas_delta": 1}, idempotency_key=f"bench-{inc.pk}",
                            requested_by=self.user, requested_at=inc.triggered_at,
                            finished_at=inc.triggered_at + timedelta(minutes=3),
                        )
                    )  # fmt: skip
                if inc.resolved_at and rng.random() < 0.5:
                    pms.append(
                        Postmortem(incident=inc, title=inc.title, created_by=self.user,
                                   status=rng.choice(["draft", "in_review", "published"]))
                    )  # fmt: skip
                    for k in range(rng.choice((0, 1, 2))):
                        items.append(
                            ActionItem(
                                incident=inc, title=f"follow-up {inc.pk}-{k}",
                                status=rng.choice(["open", "in_progress", "done", "done"]),
                                category="capacity", priority="P2",
                                due_date=(inc.triggered_at + timedelta(days=30)).date(),
                                created_by=self.user, created_at=inc.triggered_at,
                                namespace=inc.namespace, runbook=rb,
                            )
                        )  # fmt: skip
            Alert.objects.bulk_create(alerts)
            ActionRun.objects.bulk_create(runs)
            Postmortem.objects.bulk_create(pms)
            ActionItem.objects.bulk_create(items)
            made.extend(incidents)
        return made


def measure(history: History, label: str) -> dict:
    """A new incident like many before it, and the timed request for its similar ones."""
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    with connection.cursor() as cur:
        cur.execute("ANALYZE")  # what autovacuum would have done on a live database
    (target,) = history.grow(1, labels=TARGET, slug="ttft-spike")
    client = Client()
    client.force_login(history.user)
    url = f"/api/v1/incidents/{target.pk}/similar/"

    def get():
        r = client.get(url)
        assert r.status_code == 200, r.status_code
        return r

    body = get().json()  # warm: template loading, catalogue parse, connection
    reset_queries()
    with CaptureQueriesContext(connection) as ctx:
        get()
    queries = list(ctx.captured_queries)
    times = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        get()
        times.append((time.perf_counter() - started) * 1000)
    return {
        "label": label,
        "incidents": history.count,
        "times": times,
        "queries": len(queries),
        "found": len(body["similar"]),
        "unfixed": body["fix_not_done"],
        "candidates_sql": next((q["sql"] for q in queries if "UNION ALL" in q["sql"]), ""),
    }


def explain(sql: str) -> list[str]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("EXPLAIN (ANALYZE, BUFFERS OFF, TIMING OFF, SUMMARY ON) " + sql)
        return [row[0] for row in cur.fetchall()]


def main() -> int:
    fresh_database()
    setup_django()
    try:
        history = History()
        started = time.perf_counter()
        history.grow(SMALL - 1)
        small = measure(history, f"{SMALL:,} incidents")
        history.grow(LARGE - history.count - 1)
        fill_s = time.perf_counter() - started
        large = measure(history, f"{LARGE:,} incidents")
        print(
            f"\nSimilar incidents bench (PostgreSQL; {fill_s:.0f} s to fill; {REQUESTS} requests)"
        )
        print(f"  {'history':<22}{'p50 ms':>9}{'p95 ms':>9}{'queries':>9}{'similar':>9}")
        for r in (small, large):
            print(
                f"  {r['label']:<22}{pct(r['times'], 0.5):>9.1f}{pct(r['times'], 0.95):>9.1f}"
                f"{r['queries']:>9}{r['found']:>9}"
            )
        ratio = pct(large["times"], 0.5) / pct(small["times"], 0.5)
        print(f"  server time p50, {LARGE:,} vs {SMALL:,} incidents: {ratio:.2f}x")
        from tests.bench.summary import record

        record("similar", f"similar incidents API at {LARGE:,} vs {SMALL:,}, p50", ratio, 1.5,
               ratio <= 1.5)  # fmt: skip
        print(f"  fix not done shown: {large['unfixed']}")
        print("  plan of the candidates statement at the large size:")
        for line in explain(large["candidates_sql"]):
            print(f"    {line}")
    finally:
        drop_database()
    return 0


if __name__ == "__main__":
    sys.exit(main())
