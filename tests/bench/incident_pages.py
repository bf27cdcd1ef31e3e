"""Incident list and detail at 1,000 and at 100,000 incidents (a bench, not a test; issue
#14: server time at 100k within 1.5x of 1k).

Two PostgreSQL databases of its own (dropped at the end), filled with SQL: incidents 10
minutes apart, most resolved, the newest 50 open, each with 5 alerts and 4 timeline
events; one holds 1k incidents, the other 100k (the same newest 1k and 99k older). In
this process (Django test Client: the real URL, middleware, permission check, selectors,
template or serializer), each page is rendered RENDERS times per size, the sizes taking
turns so both see the same load from the rest of the machine; the same incident is
shown in both. Prints the median server time per page, the ratio, and PASS/MISS
against 1.5x.

Environment: BENCH_PAGES_SMALL (1000), BENCH_PAGES_LARGE (100000), BENCH_PG_HOST,
BENCH_PG_PORT.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: make tests.bench importable

from tests.bench import stack  # noqa: E402

SMALL = int(os.environ.get("BENCH_PAGES_SMALL", "1000"))
LARGE = int(os.environ.get("BENCH_PAGES_LARGE", "100000"))
RENDERS = 60  # per page and size: enough that a median holds still on a shared machine
ROUNDS = 6  # the two sizes take turns this many times
TARGET = 1.5
DB = f"bench_pages_{os.getpid()}"

# Incidents first..last (i = 1 the oldest, 10 minutes apart), then their alerts and
# events. The open ones are the newest 50 of the whole run.
_INCIDENTS = """
INSERT INTO incidents_incident (
    title, severity, status, grouping_key, runbook, namespace, group_labels, started_at,
    triggered_at, acknowledged_at, mitigated_at, resolved_at, reopen_count, last_alert_at,
    is_drill, created_at, updated_at, alert_digest)
SELECT 'VLLMHighTTFT on llm-serving/vllm-chat-' || (i %% 40),
       'SEV' || (1 + i %% 4),
       CASE WHEN i > %(total)s - 50 THEN 'triggered' ELSE 'resolved' END,
       'bench-group-' || i,
       (ARRAY['ttft-spike', 'nccl-hang', 'long-context-kv', ''])[1 + i %% 4],
       'team-' || (i %% 6),
       jsonb_build_object('alertname', 'VLLMHighTTFT', 'cluster', 'c' || (i %% 30)),
       t, t, t + interval '4 minutes', t + interval '1 hour',
       CASE WHEN i > %(total)s - 50 THEN NULL ELSE t + interval '2 hours' END,
       0, t, false, t, t, ''
FROM generate_series(%(first)s, %(last)s) AS i,
     LATERAL (SELECT now() - (%(total)s - i) * interval '10 minutes' AS t) AS at
"""
_ALERTS = """
INSERT INTO incidents_alert (
    fingerprint, starts_at, alertname, status, severity, labels, annotations, ends_at,
    generator_url, grouping_key, incident_id, first_received_at, last_received_at,
    receive_count)
SELECT md5(inc.id || '-' || k), inc.started_at, 'VLLMHighTTFT',
       CASE WHEN inc.status = 'resolved' THEN 'resolved' ELSE 'firing' END, 'critical',
       jsonb_build_object('alertname', 'VLLMHighTTFT', 'pod', 'vllm-chat-' || k,
                          'namespace', 'llm-serving', 'lws', 'vllm-chat'),
       jsonb_build_object('summary', 'TTFT p99 above 10s'),
       inc.resolved_at, '', inc.grouping_key, inc.id, inc.started_at, inc.started_at, 1
FROM incidents_incident inc, generate_series(1, 5) AS k
WHERE inc.id > %(after)s
"""
_EVENTS = """
INSERT INTO incidents_timelineevent (incident_id, kind, occurred_at, source, message, payload)
SELECT inc.id, (ARRAY['incident_opened', 'alert_fired', 'status_changed', 'note'])[k],
       inc.triggered_at + k * interval '1 minute', 'alertmanager', 'bench event ' || k, '{}'
FROM incidents_incident inc, generate_series(1, 4) AS k
WHERE inc.id > %(after)s
"""


def grow(conn, first: int, last: int, total: int) -> None:
    after = conn.execute("SELECT coalesce(max(id), 0) FROM incidents_incident").fetchone()[0]
    params = {"first": first, "last": last, "total": total, "after": after}
    with conn.transaction():
        for sql in (_INCIDENTS, _ALERTS, _EVENTS):
            conn.execute(sql, params)
    conn.execute("VACUUM ANALYZE")  # what autovacuum would have done on a live database


def viewer():
    from django.contrib.auth.models import Group, User

    from console import roles

    user, _ = User.objects.get_or_create(username="bench-viewer")
    user.groups.add(Group.objects.get(name=roles.VIEWER))
    return user


def use(dbname: str) -> None:
    """Point Django's connection at `dbname` (the next query connects)."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = dbname


def measure(pages: dict[str, str], dbs: dict[int, str]) -> dict[int, dict[str, float]]:
    """Median server time per page and size. The sizes take turns, ROUNDS times
    RENDERS // ROUNDS renders each, so both see the same load from the rest of the
    machine."""
    from django.test import Client

    clients = {}
    for size, dbname in dbs.items():
        use(dbname)
        clients[size] = Client()
        clients[size].force_login(viewer())
    times: dict[int, dict[str, list[float]]] = {size: {name: [] for name in pages} for size in dbs}
    for _ in range(ROUNDS):
        for size, dbname in dbs.items():
            use(dbname)
            client = clients[size]
            for name, url in pages.items():
                assert client.get(url).status_code == 200, url  # warm: connection, caches
                for _ in range(RENDERS // ROUNDS):
                    t = time.perf_counter()
                    response = client.get(url)
                    times[size][name].append(time.perf_counter() - t)
                    assert response.status_code == 200, (url, response.status_code)
    return {
        size: {name: statistics.median(ts) * 1000 for name, ts in by_page.items()}
        for size, by_page in times.items()
    }


def main() -> int:
    import psycopg

    tmp = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    dbs = {SMALL: f"{DB}_small", LARGE: f"{DB}_large"}
    try:
        for dbname in dbs.values():
            stack.reset_database(dbname)
        stack.migrate(list(dbs.values()), tmp)
        os.environ.update(stack.console_env(dbs[SMALL], tmp / "var", ALLOWED_HOSTS="testserver"))
        import django

        django.setup()
        t = time.perf_counter()
        for size, dbname in dbs.items():
            with psycopg.connect(stack.dsn(dbname), autocommit=True) as conn:
                # The newest SMALL incidents first, so the incident shown (the newest,
                # id SMALL) and the open ones are the same at both sizes.
                grow(conn, LARGE - SMALL + 1, LARGE, LARGE)
                if size == LARGE:
                    grow(conn, 1, LARGE - SMALL, LARGE)
        print(f"filled {SMALL:,} and {LARGE:,} incidents in {time.perf_counter() - t:.0f} s")
        pages = {
            "incident list (page 1)": "/",
            "incident list, open only": "/?status=open",
            "incident detail": f"/incidents/{SMALL}/",
            "API incident list": "/api/v1/incidents/",
            "API incident detail": f"/api/v1/incidents/{SMALL}/",
        }
        measured = measure(pages, dbs)
        small, large = measured[SMALL], measured[LARGE]
        print(f"\nIncident pages, server time (median of {RENDERS}, in-process, PostgreSQL)")
        print(f"  {'page':<28}{SMALL:>9,} {LARGE:>9,}   ratio")
        targets = []
        for name in pages:
            ratio = large[name] / small[name]
            print(f"  {name:<28}{small[name]:>7.1f}ms {large[name]:>7.1f}ms {ratio:>6.2f}x")
            targets.append(
                stack.Target(f"{name} at {LARGE:,} within {TARGET}x of {SMALL:,}",
                             f"{ratio:.2f}x", ratio <= TARGET)
            )  # fmt: skip
        stack.print_targets(targets)
        return 0
    finally:
        from django.db import connections

        connections.close_all()
        for dbname in dbs.values():
            stack.drop_database(dbname)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
