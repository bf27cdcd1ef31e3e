"""Tracking-reports benchmark (a benchmark, not a test; run it with `make bench`).

Builds a PostgreSQL database `bench_reports` (dropped and re-created, migrated with
manage.py like the other benches) holding 2,000 incidents over the last 24 months with
100,000 action items in every status, then, in this process (Django test Client, the
real URL, middleware, permission check, selectors and template), renders the reports
page 10 times for the default range (last 180 days) and 10 times for the whole 24
months, and exports the biggest CSV table once. Prints p50/p95 per render and, as an
in-run baseline on the same table, a bare `SELECT count(*)` and one GROUP BY.

Environment: BENCH_PG_HOST (127.0.0.1), BENCH_PG_PORT (5432), BENCH_REPORT_ITEMS
(100000), BENCH_REPORT_INCIDENTS (2000), BENCH_SEED (1).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv" / "bin" / "python"
PG = (os.environ.get("BENCH_PG_HOST", "127.0.0.1"), int(os.environ.get("BENCH_PG_PORT", "5432")))
DB = "bench_reports"
ITEMS = int(os.environ.get("BENCH_REPORT_ITEMS", "100000"))
INCIDENTS = int(os.environ.get("BENCH_REPORT_INCIDENTS", "2000"))
SEED = int(os.environ.get("BENCH_SEED", "1"))
RENDERS = 10
BATCH = 5000
ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "DATABASE_URL": f"postgres://postgres@{PG[0]}:{PG[1]}/{DB}",
    "SECRET_KEY": "bench",
    "ALERTMANAGER_TOKEN": "bench-reports-token",
    "ALLOWED_HOSTS": "testserver,localhost",
    "LOG_LEVEL": "WARNING",
    "DEBUG": "0",
    "SECURE_SSL_REDIRECT": "0",  # the in-process test Client speaks plain HTTP
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fresh_database() -> None:
    with psycopg.connect(host=PG[0], port=PG[1], user="postgres", autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {DB}")
    env = {**{k: v for k, v in os.environ.items() if k not in ENV}, **ENV}
    subprocess.run(
        [str(PYTHON), "manage.py", "migrate", "--verbosity", "0"],
        cwd=REPO, env=env, check=True, timeout=600,
    )  # fmt: skip


def setup_django() -> None:
    os.environ.update(ENV)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()


def populate() -> dict:
    """Incidents over 24 months, 50-ish items each, postmortems on most resolved ones."""
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.utils import timezone

    from console import roles
    from incidents.models import Incident
    from postmortems.models import DUE_BY_PRIORITY, ActionItem, ItemCategory, Postmortem
    from runbooks.catalog import load_catalog

    rng = random.Random(SEED)
    now = timezone.now()
    slugs = [rb.slug for rb in load_catalog().all()] + [""]
    namespaces = [f"team-{n}" for n in "abcdef"]
    viewer = User.objects.create_user("bench-viewer")
    viewer.groups.add(Group.objects.get(name=roles.VIEWER))
    owners = User.objects.bulk_create(
        User(username=f"owner-{i:02d}", password="!") for i in range(40)
    )
    incidents = []
    for i in range(INCIDENTS):
        t = now - timedelta(days=rng.uniform(0, 730))
        ack = t + timedelta(minutes=rng.uniform(1, 30)) if rng.random() < 0.95 else None
        done = ack and (now - t) > timedelta(days=2)
        res = t + timedelta(hours=rng.uniform(0.5, 8)) if done else None
        incidents.append(
            Incident(
                title=f"bench incident {i}", severity=rng.choice(["SEV1", "SEV2", "SEV3", "SEV4"]),
                status="resolved" if res else ("acknowledged" if ack else "triggered"),
                grouping_key=f"bench-{i}", runbook=rng.choice(slugs),
                namespace=rng.choice(namespaces), triggered_at=t, started_at=t,
                acknowledged_at=ack, resolved_at=res,
            )
        )  # fmt: skip
    incidents = Incident.objects.bulk_create(incidents, batch_size=BATCH)
    Postmortem.objects.bulk_create(
        (
            Postmortem(
                incident=inc, title=inc.title, created_by=viewer,
                status="published" if rng.random() < 0.7 else "draft",
                published_at=inc.resolved_at + timedelta(days=2),
            )
            for inc in incidents
            if inc.resolved_at and rng.random() < 0.7
        ),
        batch_size=BATCH,
    )  # fmt: skip
    categories, priorities = ItemCategory.values, list(DUE_BY_PRIORITY)

    def item(k: int) -> ActionItem:
        inc = incidents[k % len(incidents)]
        created = min(now, inc.triggered_at + timedelta(days=rng.uniform(0.5, 5)))
        age = (now - created).days
        roll = rng.random()
        status = (
            "done" if roll < min(0.85, age / 200) else
            "wont_do" if roll < min(0.9, age / 200 + 0.05) else
            "in_progress" if roll < 0.95 else "open"
        )  # fmt: skip
        closed = None
        if status in ("done", "wont_do"):
            closed = min(now, created + timedelta(days=rng.uniform(1, 90)))
        priority = rng.choice(priorities)
        return ActionItem(
            title=f"follow-up {k}", owner=rng.choice(owners) if rng.random() < 0.9 else None,
            due_date=(created + DUE_BY_PRIORITY[priority]).date(), priority=priority,
            category=rng.choice(categories), status=status, incident=inc,
            namespace=inc.namespace, runbook=inc.runbook, created_by=viewer,
            created_at=created, closed_at=closed,
        )  # fmt: skip

    started = time.perf_counter()
    for first in range(0, ITEMS, BATCH):
        batch = [item(k) for k in range(first, min(ITEMS, first + BATCH))]
        ActionItem.objects.bulk_create(batch, batch_size=BATCH)
    insert_s = time.perf_counter() - started
    with connection.cursor() as cur:
        cur.execute("ANALYZE")  # what autovacuum would have done on a live database
    return {"viewer": viewer, "insert_s": insert_s}


def timed(fn, runs: int = RENDERS) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def measure(viewer) -> None:
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from postmortems.models import ActionItem

    client = Client()
    client.force_login(viewer)
    today = timezone.localdate()
    full = {"start": (today - timedelta(days=730)).isoformat(), "end": today.isoformat()}
    renders, slowest = {}, {}
    for label, params in (("last 180 days (default)", {}), ("24 months", full)):

        def render(params=params):
            r = client.get("/postmortems/reports/", params)
            assert r.status_code == 200, r.status_code

        render()  # warm: template loading, catalogue parse, connection
        reset_queries()  # the request_started signal resets the log: start from empty
        with CaptureQueriesContext(connection) as ctx:
            render()
        # captured_queries is a live slice of the log the next request resets: copy now.
        queries = list(ctx.captured_queries)
        slowest[label] = sorted(queries, key=lambda q: -float(q["time"]))[:3]
        size = len(client.get("/postmortems/reports/", params).content)
        renders[label] = (timed(render), len(queries), size)

    def export() -> int:
        r = client.get("/postmortems/reports/csv/overdue/", full)
        return sum(chunk.count(b"\n") for chunk in r.streaming_content) - 1

    t = time.perf_counter()
    csv_rows = export()
    csv_ms = (time.perf_counter() - t) * 1000

    def baseline_count():
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM postmortems_actionitem")
            cur.fetchone()

    def baseline_group():
        with connection.cursor() as cur:
            cur.execute(
                "SELECT category, status, count(*) FROM postmortems_actionitem GROUP BY 1, 2"
            )
            cur.fetchall()

    base_count, base_group = timed(baseline_count), timed(baseline_group)
    total = ActionItem.objects.count()
    print(f"\nReports bench: {total} action items, {INCIDENTS} incidents over 24 months")
    print(f"  {'what':<40}{'p50 ms':>10}{'p95 ms':>10}{'queries':>9}{'KiB':>8}")
    for label, (ms, queries, size) in renders.items():
        print(
            f"  {'page, ' + label:<40}{pct(ms, 0.5):>10.1f}{pct(ms, 0.95):>10.1f}"
            f"{queries:>9}{size / 1024:>8.0f}"
        )
    print(f"  {'CSV overdue, 24 months (' + str(csv_rows) + ' rows)':<40}{csv_ms:>10.1f}")
    for label, ms in (
        ("baseline SELECT count(*)", base_count),
        ("baseline GROUP BY category, status", base_group),
    ):
        print(f"  {label:<40}{pct(ms, 0.5):>10.1f}{pct(ms, 0.95):>10.1f}")
    ratio = pct(renders["24 months"][0], 0.5) / (pct(base_count, 0.5) + pct(base_group, 0.5))
    print(f"  page (24 months) p50 / baseline (count + GROUP BY) p50: {ratio:.1f}x")
    print(f"  (renders: {RENDERS} each, in-process Django Client on PostgreSQL, after 1 warm-up)")
    print("  slowest queries of one 24-month render:")
    for q in slowest["24 months"]:
        print(f"    {float(q['time']) * 1000:8.1f} ms  {q['sql'][:150]}")


def main() -> int:
    fresh_database()
    setup_django()
    made = populate()
    print(f"inserted {ITEMS} action items in {made['insert_s']:.1f} s (bulk_create, {BATCH}/batch)")
    measure(made["viewer"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
