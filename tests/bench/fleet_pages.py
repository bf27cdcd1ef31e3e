"""Every page a responder reads, at a year of a large fleet: 1M incidents against 10k (a
bench, not a test; issue #29: each within 1.5x of its server time at 10k), and the API
incident list at 100k against 1k.

Each size is a PostgreSQL database of its own (named with the pid, dropped at the end),
migrated, then filled by the year generator (postmortems/fleet_year) or, when that is
not there, by tests/bench/fleet_fill.py's SQL. In this process (Django test Client with a
logged-in admin: the real URL, middleware, permission check, selectors, template or
serializer), each page is timed RENDERS times per size, the sizes taking turns round by
round so both see the same load from the rest of the machine. Prints, per page, the
median server time at both sizes, the ratio, PASS/MISS against 1.5x (a MISS says by how
much) and the number of queries (which must not grow with the size).

Environment: BENCH_FLEET_SMALL (10000), BENCH_FLEET_LARGE (1000000), BENCH_API_SMALL
(1000), BENCH_API_LARGE (100000; 0 skips the API pair), BENCH_FLEET_KEEP=1 keeps the
databases, BENCH_FLEET_LARGE_DB=<name> uses an existing generated database as the large
one (migrated, never filled nor dropped), BENCH_FLEET_RENDERS (15), BENCH_FLEET_ONLY (a
substring: only the pages whose name holds it), BENCH_FLEET_FILLER (auto | sql),
BENCH_FLEET_ALERTS_PER (10), BENCH_FLEET_EVENTS_PER (20), BENCH_PG_HOST, BENCH_PG_PORT.
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

from tests.bench import fleet_fill, fleet_urls, stack  # noqa: E402

SMALL = int(os.environ.get("BENCH_FLEET_SMALL", "10000"))
LARGE = int(os.environ.get("BENCH_FLEET_LARGE", "1000000"))
API_SMALL = int(os.environ.get("BENCH_API_SMALL", "1000"))
API_LARGE = int(os.environ.get("BENCH_API_LARGE", "100000"))
KEEP = os.environ.get("BENCH_FLEET_KEEP") == "1"
LARGE_DB = os.environ.get("BENCH_FLEET_LARGE_DB", "")
RENDERS = int(os.environ.get("BENCH_FLEET_RENDERS", "15"))
ONLY = os.environ.get("BENCH_FLEET_ONLY", "")
# auto: the year generator when there is one, else fleet_fill; sql: fleet_fill always
# (when the large database reused was written by it, the small one must be too).
FILLER = os.environ.get("BENCH_FLEET_FILLER", "auto")
# As dense as fleet_1m_gen (a full-density million does not fit this machine's disk).
ALERTS_PER = int(os.environ.get("BENCH_FLEET_ALERTS_PER", "10"))
EVENTS_PER = int(os.environ.get("BENCH_FLEET_EVENTS_PER", "20"))
ROUNDS = 3  # the sizes take turns this many times
TARGET = 1.5
PREFIX = f"bench_fleet_{os.getpid()}"
ADMIN = "bench-fleet-admin"


def use(dbname: str) -> None:
    """Point Django's connection at `dbname` (the next query connects)."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = dbname


def fill(dbname: str, incidents: int) -> str:
    """Fill `dbname` with a year of `incidents`; says which filler did it."""
    try:
        from postmortems.fleet_year import generate_year
    except ImportError:
        generate_year = None
    if FILLER == "sql" or generate_year is None:
        fleet_fill.fill(stack.dsn(dbname), incidents)
        return "fleet_fill (SQL stand-in)"
    use(dbname)
    generate_year(
        incidents=incidents, seed=1, using="default", alerts_per=ALERTS_PER, events_per=EVENTS_PER
    )
    return f"postmortems.fleet_year ({ALERTS_PER} alerts, {EVENTS_PER} events per incident)"


def admin():
    from django.contrib.auth.models import User

    user, _ = User.objects.get_or_create(username=ADMIN, defaults={"is_superuser": True})
    if not user.is_superuser:
        user.is_superuser = True
        user.save(update_fields=["is_superuser"])
    return user


def measure(urls: dict[str, dict[str, str]], dbs: dict[str, str]):
    """(median ms, queries) per size and page. The sizes take turns, ROUNDS times."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    clients, queries = {}, {}
    for size, dbname in dbs.items():
        use(dbname)
        clients[size] = Client()
        clients[size].force_login(admin())
        queries[size] = {}
        for name, url in urls[size].items():
            _get(clients[size], url)  # warm: connection, session, caches
            with CaptureQueriesContext(connection) as captured:
                _get(clients[size], url)
            queries[size][name] = len(captured.captured_queries)
    times: dict[str, dict[str, list[float]]] = {s: {n: [] for n in urls[s]} for s in dbs}
    per_round = max(1, RENDERS // ROUNDS)
    for _ in range(ROUNDS):
        for size, dbname in dbs.items():
            use(dbname)
            for name, url in urls[size].items():
                for _ in range(per_round):
                    times[size][name].append(_get(clients[size], url))
    medians = {
        s: {n: statistics.median(ts) * 1000 for n, ts in by.items()} for s, by in times.items()
    }
    return medians, queries


def whole_exports(urls: dict[str, dict[str, str]], dbs: dict[str, str]) -> None:
    """Each CSV export read to its end once per size: its rows grow with the year, so
    this is information, not a target (the target is its first row)."""
    from django.test import Client

    csvs = [n for n in urls["small"] if "CSV" in n]
    if not csvs:
        return
    print("\nCSV exports read to the end (once; rows grow with the data, not a target)")
    for size, dbname in dbs.items():
        use(dbname)
        client = Client()
        client.force_login(admin())
        for name in csvs:
            seconds, lines = _whole(client, urls[size][name])
            print(f"  {size:<6} {name}: {seconds * 1000:.0f} ms, {lines - 1:,} rows")


def _get(client, url: str) -> float:
    """Server time of one GET in seconds: to the whole answer, or for a streamed CSV to
    its first row (the header comes before any query); the rest is left unread (a year's
    export is read to its end once, by whole_exports)."""
    t = time.perf_counter()
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    if not getattr(response, "streaming", False):
        return time.perf_counter() - t
    chunks = iter(response.streaming_content)
    for _ in zip(range(2), chunks, strict=False):  # the header, then the first row
        pass
    first_row = time.perf_counter() - t
    response.close()  # closes the generator, and with it the query's cursor
    return first_row


def _whole(client, url: str) -> tuple[float, int]:
    """A CSV export read to its end: (seconds, lines)."""
    t = time.perf_counter()
    response = client.get(url)
    lines = sum(chunk.count(b"\n") for chunk in response.streaming_content)
    response.close()
    return time.perf_counter() - t, lines


def report(title: str, small: str, large: str, medians, queries) -> list[tuple]:
    """Print one line per page; the (name, ratio, small ms, large ms, passed) rows."""
    print(f"\n{title}")
    out = []
    for name in medians[small]:
        key = name
        s, lg = medians[small][name], medians[large][name]
        if "CSV" in name:
            name = f"{name} (first row)"
        ratio = lg / s if s else float("inf")
        passed = ratio <= TARGET
        by = "" if passed else f"; over by {ratio - TARGET:.2f}x ({ratio / TARGET - 1:+.0%})"
        qs, ql = queries[small][key], queries[large][key]
        same = "" if qs == ql else "  QUERY COUNT DIFFERS"
        print(
            f"{'PASS' if passed else 'MISS'} {name}: {ratio:.2f}x (small {s:.1f} ms, "
            f"large {lg:.1f} ms, target {TARGET}x{by}) queries {qs}/{ql}{same}"
        )
        out.append((name, ratio, s, lg, passed, f"{qs}/{ql} queries"))
    return out


def record(rows: list[tuple], sizes: str) -> None:
    try:
        from tests.bench import summary  # the lead's collector, when there is one
    except ImportError:
        return
    for name, ratio, s, lg, passed, queries in rows:
        detail = f"{sizes}: small {s:.1f} ms, large {lg:.1f} ms, {queries}"
        summary.record("fleet_pages", name, round(ratio, 2), TARGET, passed, detail)


def build(pairs: dict[str, tuple[str, int]], tmp: Path) -> None:
    """Create, migrate (one template, cloned) and fill each (dbname, incidents) pair; the
    reused large database is only migrated."""
    from psycopg import sql

    fresh = {db: n for db, n in pairs.values() if db != LARGE_DB}
    template = f"{PREFIX}_tpl"
    stack.reset_database(template)
    stack.migrate([template, *([LARGE_DB] if LARGE_DB else [])], tmp)
    with stack._admin() as conn:
        for db in fresh:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db))
            )
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(db), sql.Identifier(template)
                )
            )
    stack.drop_database(template)
    for db, n in fresh.items():
        t = time.perf_counter()
        how = fill(db, n)
        print(f"filled {db} with {n:,} incidents by {how} in {time.perf_counter() - t:.0f} s")


def ensure_indexes(dbname: str) -> None:
    """A reused database migrated before an index was added to a migration it has
    already applied (incidents 0007 grew while the benches ran): add what is missing."""
    from importlib import import_module

    from django.db import connection

    from incidents.models import Incident, WebhookReceipt
    from postmortems.models import ActionItem

    use(dbname)
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")
        present = {name for (name,) in cursor.fetchall()}
    with connection.schema_editor() as editor:
        for model in (Incident, WebhookReceipt, ActionItem):
            for index in model._meta.indexes:
                if index.name not in present:
                    print(f"adding index {index.name} to {dbname}")
                    editor.add_index(model, index)
        import_module("incidents.migrations.0007_fleet_indexes")._trigram_indexes(None, editor)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def fleet_pages(pairs: dict[str, tuple[str, int]], dbs: dict[str, str]) -> None:
    fleet = {size: dbs[size] for size in ("small", "large")}
    urls = {size: fleet_urls.pages(db, use) for size, db in fleet.items()}
    if ONLY:
        urls = {s: {n: u for n, u in by.items() if ONLY in n} for s, by in urls.items()}
    medians, queries = measure(urls, fleet)
    title = (
        f"Pages at {pairs['large'][1]:,} incidents against {SMALL:,} "
        f"(median of {RENDERS}, in-process, PostgreSQL)"
    )
    rows = report(title, "small", "large", medians, queries)
    record(rows, f"{SMALL:,} vs {pairs['large'][1]:,}")
    whole_exports(urls, fleet)


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    fleet_pair = bool(LARGE or LARGE_DB)  # BENCH_FLEET_LARGE=0: the API pair only
    pairs = {}
    if fleet_pair:
        pairs["small"] = (f"{PREFIX}_small", SMALL)
        pairs["large"] = (LARGE_DB or f"{PREFIX}_large", LARGE)
    if API_LARGE:
        pairs["api_small"] = (f"{PREFIX}_api_small", API_SMALL)
        pairs["api_large"] = (f"{PREFIX}_api_large", API_LARGE)
    first = next(iter(pairs.values()))[0]
    os.environ.update(stack.console_env(first, tmp / "var", ALLOWED_HOSTS="testserver"))
    import django

    django.setup()
    try:
        build(pairs, tmp)
        if LARGE_DB:
            ensure_indexes(LARGE_DB)
        dbs = {size: db for size, (db, _n) in pairs.items()}
        if fleet_pair:
            fleet_pages(pairs, dbs)
        if API_LARGE:
            api = {size: dbs[size] for size in ("api_small", "api_large")}
            api_urls = {size: fleet_urls.api_list_pages() for size in api}
            medians, queries = measure(api_urls, api)
            title = f"API incident list at {API_LARGE:,} against {API_SMALL:,}"
            rows = report(title, "api_small", "api_large", medians, queries)
            record(rows, f"{API_SMALL:,} vs {API_LARGE:,}")
        return 0
    finally:
        from django.db import connections

        connections.close_all()
        if not KEEP:
            for db, _n in pairs.values():
                if db != LARGE_DB:
                    stack.drop_database(db)
        else:
            print("kept: " + ", ".join(db for db, _n in pairs.values()))
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
