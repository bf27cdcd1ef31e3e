"""Where a webhook request's time goes, per kind of notification (a tool, not a test).

In this process (Django test Client: the real URL, middleware, view, services) on its own
PostgreSQL database, sends the storm's three kinds of 50-alert body (a new group, an
unchanged repeat of a firing group, the resolution of a whole group): first REQUESTS of
each kind timed without a profiler (wall ms, this process's CPU ms, the database server
process's CPU ms (a local server), SQL ms per statement, queries), then REQUESTS more
under cProfile (none with --top 0), whose top functions (own time, summed over
those requests) are printed per kind.

    .venv/bin/python tests/bench/ingest_profile.py [--top 25]

Environment: BENCH_PROFILE_REQUESTS (40), BENCH_PG_HOST, BENCH_PG_PORT.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: make tests.bench importable

import psutil  # noqa: E402

from tests.bench import stack, storm  # noqa: E402

REQUESTS = int(os.environ.get("BENCH_PROFILE_REQUESTS", "40"))
DB = f"bench_profile_{os.getpid()}"


def bodies(first: int, n: int) -> list[storm.Group]:
    import random

    rng = random.Random(first)
    groups = [storm.new_group(9, first + i, 60_000, rng) for i in range(n)]
    for g in groups:
        storm.render(g)
    return groups


def run(top: int) -> None:
    import django

    django.setup()
    from django.db import connection
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Bearer {stack.TOKEN}")
    sql_s = [0.0]
    queries = [0]
    by_statement: dict[str, list[float]] = {}

    def timer(execute, sql, params, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent = time.perf_counter() - t
            sql_s[0] += spent
            queries[0] += 1
            words = sql.split()
            what = " ".join(words[:3] if words[0] == "WITH" else words[:1] + words[2:3])
            by_statement.setdefault(what[:60], []).append(spent)

    def post(body: bytes) -> None:
        r = client.post(stack.WEBHOOK_PATH, data=body, content_type="application/json")
        assert r.status_code == 200, (r.status_code, r.content[:300])

    def kinds(groups: list[storm.Group]):
        """(kind, body) lists: the groups' first notifications, a repeat, a resolve."""
        new = [g.body for g in groups]
        resolved = []
        for g in groups:
            storm.resolve(g, 61_000)
            resolved.append(g.body)
        return [(storm.NEW, new), (storm.REPEAT, new), (storm.RESOLVE, resolved)]

    for _, batch in kinds(bodies(0, 5)):  # warm up: imports, connection, caches
        for body in batch:
            post(body)
    with connection.cursor() as cursor:  # the server process serving this connection
        cursor.execute("SELECT pg_backend_pid()")
        backend = psutil.Process(cursor.fetchone()[0])

    def db_cpu() -> float:
        times = backend.cpu_times()
        return times.user + times.system

    wrapper = connection.execute_wrapper(timer)  # kept: the wrapper goes with the object
    wrapper.__enter__()
    print(f"\nper request, mean of {REQUESTS} (50-alert bodies, no profiler):")
    print(f"  {'kind':<10}{'wall ms':>9}{'CPU ms':>9}{'DB CPU':>9}{'SQL ms':>9}{'queries':>9}")
    for kind, batch in kinds(bodies(1000, REQUESTS)):
        walls, cpus = [], []
        sql_s[0], queries[0] = 0.0, 0
        db_before = db_cpu()
        for body in batch:
            t, cpu = time.perf_counter(), time.process_time()
            post(body)
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - cpu)
        db_ms = (db_cpu() - db_before) / len(batch) * 1000
        print(
            f"  {kind:<10}{statistics.mean(walls) * 1000:>9.2f}{statistics.mean(cpus) * 1000:>9.2f}"
            f"{db_ms:>9.2f}{sql_s[0] / len(batch) * 1000:>9.2f}{queries[0] / len(batch):>9.1f}"
        )
        for what, spent in by_statement.items():
            per = len(spent) / len(batch)
            print(f"      {statistics.mean(spent) * 1000:6.2f} ms x{per:.0f}  {what}")
        by_statement.clear()
    if top <= 0:  # --top 0: the figures above only
        return
    for kind, batch in kinds(bodies(2000, REQUESTS)):
        profile = cProfile.Profile()
        for body in batch:
            profile.runcall(post, body)
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(r"incidents/|webhook|handlers/base", top)
        print(f"\n=== {kind}: cProfile over {len(batch)} requests ===")
        print(out.getvalue().rstrip())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    try:
        stack.reset_database(DB)
        stack.migrate([DB], tmp)
        for sub in ("queue", "processed", "control"):  # the filesystem broker's folders
            (tmp / "var" / "broker" / sub).mkdir(parents=True)
        os.environ.update(stack.console_env(DB, tmp / "var", ALLOWED_HOSTS="testserver"))
        run(args.top)
        return 0
    finally:
        from django.db import connections

        connections.close_all()
        stack.drop_database(DB)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
