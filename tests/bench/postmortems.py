"""Postmortem drafting benchmark (a benchmark, not a test; run it with `make bench`).

An incident with 10,000 timeline events and 5,000 alerts on PostgreSQL; time
`postmortem_draft_build` (timeline assembly, impact, suggestions, stored snapshots — with
Prometheus unreachable, so the figure is the console's own work), best of and median of
BENCH_DRAFT_REPEATS drafts (target <= 1 s). Baseline in the same run: reading the same
event and alert rows with one plain query each.

Environment: BENCH_PG_HOST (127.0.0.1), BENCH_PG_PORT (5432), BENCH_DRAFT_REPEATS (5).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]
PG = (os.environ.get("BENCH_PG_HOST", "127.0.0.1"), int(os.environ.get("BENCH_PG_PORT", "5432")))
DB = "bench_postmortems"
EVENTS, ALERTS = 10_000, 5_000
REPEATS = int(os.environ.get("BENCH_DRAFT_REPEATS", "5"))
T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)


def setup_django(tmp: str) -> None:
    with psycopg.connect(host=PG[0], port=PG[1], user="postgres", autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {DB}")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"postgres://postgres@{PG[0]}:{PG[1]}/{DB}",
        SECRET_KEY="bench",
        ALERTMANAGER_TOKEN="bench",
        VAR_DIR=tmp,
        LOG_LEVEL="WARNING",
        PROMETHEUS_URL="http://127.0.0.1:9",  # nothing listens: snapshots record the error
        PROMETHEUS_TIMEOUT_SECONDS="0.5",
        CELERY_BROKER_URL="memory://",
    )
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def build_incident():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from console import roles
    from incidents.models import Alert, Incident, TimelineEvent

    roles.roles_sync()
    user = get_user_model().objects.create_user("bench")
    user.groups.add(Group.objects.get(name=roles.RESPONDER))
    incident = Incident.objects.create(
        title="VLLMHighTTFT storm", severity="SEV1", status="resolved", grouping_key="bench",
        runbook="ttft-spike", namespace="llm-serving", started_at=T0,
        triggered_at=T0 + timedelta(minutes=1), acknowledged_at=T0 + timedelta(minutes=4),
        mitigated_at=T0 + timedelta(minutes=40), resolved_at=T0 + timedelta(hours=2),
    )  # fmt: skip
    alerts = []
    for i in range(ALERTS):
        pod = f"vllm-chat-{i // 8}-{i % 8}"
        name = ("VLLMHighTTFT", "VLLMKVCachePressure")[i % 2]
        labels = {"alertname": name, "pod": pod, "namespace": "llm-serving", "lws": "vllm-chat",
                  "node": f"gpu-node-{i % 64}"}  # fmt: skip
        start = T0 + timedelta(seconds=i % 3600)
        alerts.append(Alert(
            incident=incident, fingerprint=f"{i:016x}", starts_at=start,
            ends_at=start + timedelta(minutes=30) if i % 3 == 0 else None,
            status="resolved" if i % 3 == 0 else "firing", alertname=labels["alertname"],
            severity="critical", labels=labels, annotations={}, grouping_key="bench",
            first_received_at=start, last_received_at=start,
        ))  # fmt: skip
    Alert.objects.bulk_create(alerts, batch_size=2000)
    kinds = ("note", "status_changed", "alert_fired", "alert_resolved", "action", "runbook_step")
    TimelineEvent.objects.bulk_create(
        [
            TimelineEvent(
                incident=incident,
                kind=kinds[i % len(kinds)],
                source="bench",
                occurred_at=T0 + timedelta(seconds=i),
                message=f"event {i}: something happened",
                payload={},
            )
            for i in range(EVENTS)
        ],
        batch_size=2000,
    )
    return incident, user


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-pm-") as tmp:
        setup_django(tmp)
        from django.db import connection

        from postmortems.models import Postmortem
        from postmortems.services import postmortem_draft_build

        incident, user = build_incident()
        drafts, reads = [], []
        for _ in range(REPEATS):
            Postmortem.objects.filter(incident=incident).delete()
            pm = Postmortem.objects.create(incident=incident, title="bench", created_by=user)
            start = time.perf_counter()
            pm = postmortem_draft_build(postmortem_id=pm.pk)
            drafts.append(time.perf_counter() - start)
            start = time.perf_counter()
            with connection.cursor() as cur:
                cur.execute("SELECT id, occurred_at, kind, message FROM incidents_timelineevent "
                            "WHERE incident_id = %s", [incident.pk])  # fmt: skip
                cur.fetchall()
                alerts_sql = ("SELECT id, alertname, starts_at, ends_at, status, labels "
                              "FROM incidents_alert WHERE incident_id = %s")  # fmt: skip
                cur.execute(alerts_sql, [incident.pk])
                cur.fetchall()
            reads.append(time.perf_counter() - start)
        entries = pm.entries.count()
        connection.close()
    print(f"\nPostmortem draft bench: {EVENTS:,} events + {ALERTS:,} alerts, {REPEATS} drafts")
    print(f"  draft:   best {min(drafts):.3f} s, median {statistics.median(drafts):.3f} s "
          f"({entries:,} timeline lines; target <= 1 s)")  # fmt: skip
    ratio = statistics.median(drafts) / statistics.median(reads)
    print(f"  baseline (read the same rows): median {statistics.median(reads):.3f} s; "
          f"ratio {ratio:.1f}x")  # fmt: skip
    draft_s = statistics.median(drafts)
    from tests.bench.summary import record

    record("postmortems", "draft of a 10k-event incident, median", draft_s, 1.0, draft_s <= 1.0,
           f"{ratio:.1f}x reading the same rows", unit=" s")  # fmt: skip
    with psycopg.connect(host=PG[0], port=PG[1], user="postgres", autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
