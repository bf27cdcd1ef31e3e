"""Retention bench (a bench, not a test; `make bench` runs it): storage per incident, and
what archiving and restoring cost, on a generated year.

In a PostgreSQL database of its own (dropped at the end), the year generator
(postmortems/fleet_year) writes BENCH_RETENTION_INCIDENTS incidents (20,000; about 30
alerts and 60 timeline entries each, as in the fleet bench). Then, in this process:
- the bytes per incident of each table with its indexes (pg_total_relation_size), hot;
- `incidents_archive(older_than_days=90)`: incidents/s, and the archive's bytes per
  archived incident against the hot bytes it took out of the tables (the baseline of the
  same run);
- the hot tables' live rows after a VACUUM (what stays hot);
- `incidents_restore` of 1,000 archived incidents: incidents/s, and every row back
  (PASS/MISS: the restored rows equal what was archived, counted).
Prints the figures docs/operations.md's sizing quotes.

Environment: BENCH_RETENTION_INCIDENTS (20000: bytes per incident hold still from there),
BENCH_RETENTION_KEEP=1 keeps the database, BENCH_PG_HOST, BENCH_PG_PORT.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench import stack  # noqa: E402
from tests.bench.summary import record  # noqa: E402

INCIDENTS = int(os.environ.get("BENCH_RETENTION_INCIDENTS", "20000"))
DB = f"bench_retention_{os.getpid()}"
DAYS = 90
RESTORE = 1000
TABLES = {
    "incidents": "incidents_incident",
    "alerts": "incidents_alert",
    "timeline": "incidents_timelineevent",
    "archive": "incidents_incidentarchive",
    "receipts": "incidents_webhookreceipt",
    "postmortems": "postmortems_postmortem",
    "action items": "postmortems_actionitem",
}


def sizes() -> dict[str, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        out = {}
        for name, table in TABLES.items():
            cursor.execute("SELECT pg_total_relation_size(%s)", [table])
            out[name] = int(cursor.fetchone()[0])
        return out


def vacuum() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for table in TABLES.values():
            cursor.execute(f"VACUUM ANALYZE {table}")


def count(table: str) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (our own table names)
        return int(cursor.fetchone()[0])


def mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def main() -> int:
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-retention-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    stack.reset_database(DB)
    try:
        stack.migrate([DB], tmp)
        os.environ.update(stack.console_env(DB, tmp / "var", ALLOWED_HOSTS="testserver"))
        import django

        django.setup()
        from incidents.archive.services import incidents_archive, incidents_restore
        from incidents.models import IncidentArchive
        from postmortems.fleet_year import generate_year

        start = time.monotonic()
        summary = generate_year(incidents=INCIDENTS, seed=1)
        print(f"generated {INCIDENTS:,} incidents in {time.monotonic() - start:.0f} s: {summary}")
        vacuum()
        hot = sizes()
        alerts, events = count("incidents_alert"), count("incidents_timelineevent")
        print(f"\nHot, {INCIDENTS:,} incidents, {alerts:,} alerts, {events:,} timeline entries:")
        for name, size in hot.items():
            print(f"  {name:<13} {mib(size):>14}  {size / INCIDENTS:>9,.0f} bytes per incident")
        per_incident = sum(hot[k] for k in ("incidents", "alerts", "timeline")) / INCIDENTS

        start = time.monotonic()
        batch = incidents_archive(older_than_days=DAYS, actor=None, method="command")
        took = time.monotonic() - start
        print(
            f"\nArchived (resolved more than {DAYS} days ago): {batch.incidents:,} incidents, "
            f"{batch.alerts:,} alerts, {batch.events:,} timeline entries in {took:.0f} s "
            f"({batch.incidents / max(took, 1e-9):,.0f} incidents/s)"
        )
        vacuum()
        after = sizes()
        archive_per = after["archive"] / max(batch.incidents, 1)
        moved_per = (hot["alerts"] + hot["timeline"]) / INCIDENTS  # what one incident held
        left_alerts, left_events = count("incidents_alert"), count("incidents_timelineevent")
        print(
            f"  archive: {mib(after['archive'])}, {archive_per:,.0f} bytes per archived incident "
            f"({archive_per / moved_per:.2f}x the {moved_per:,.0f} bytes of hot alerts and "
            "timeline it replaced)"
        )
        print(
            f"  hot rows left: {left_alerts:,} alerts ({left_alerts / alerts:.0%}), "
            f"{left_events:,} timeline entries ({left_events / events:.0%}, one 'archived' line "
            "per archived incident included)"
        )
        print(
            f"  hot bytes per incident before: {per_incident:,.0f} (incident, alerts, timeline "
            "with their indexes); after VACUUM the freed pages are reused by new rows, "
            "the files do not shrink"
        )

        ids = list(
            IncidentArchive.objects.order_by("incident_id").values_list("incident_id", flat=True)[
                :RESTORE
            ]
        )
        wanted = IncidentArchive.objects.filter(incident_id__in=ids).values_list("alerts", "events")
        want_alerts = sum(a for a, _ in wanted)
        want_events = sum(e for _, e in wanted)
        start = time.monotonic()
        result = incidents_restore(actor=None, method="command", incident_ids=ids)
        took = time.monotonic() - start
        print(
            f"\nRestored {result.incidents:,} incidents ({result.alerts:,} alerts, "
            f"{result.events:,} timeline entries) in {took:.1f} s "
            f"({result.incidents / max(took, 1e-9):,.0f} incidents/s)"
        )
        whole = (result.alerts, result.events) == (want_alerts, want_events)
        verdict = "PASS" if whole else "MISS"
        print(f"{verdict} restore brings every archived row back: {whole}")
        record(
            "retention",
            "restore brings every archived alert and timeline entry back",
            1.0 if whole else 0.0,
            1,
            whole,
            f"{result.alerts}/{want_alerts} alerts, {result.events}/{want_events} entries",
            unit="",
            higher_is_better=True,
        )
        record(
            "retention",
            "archive bytes per incident vs the hot bytes it replaced",
            archive_per / moved_per,
            1,
            archive_per <= moved_per,
            f"{archive_per:,.0f} vs {moved_per:,.0f} bytes",
        )
        return 0 if whole else 1
    finally:
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        if os.environ.get("BENCH_RETENTION_KEEP") != "1":
            stack.drop_database(DB)
        subprocess.run(["rm", "-rf", str(tmp)], check=False)


if __name__ == "__main__":
    sys.exit(main())
