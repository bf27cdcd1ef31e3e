"""Run by test_archive_sqlite.py in a process of its own on a migrated SQLite file (embedded
mode): archive an old incident, check what left, restore it, check every row came back.
Prints one JSON line of findings."""

import json
import os
import sys
from datetime import timedelta

import django

sys.path.insert(0, os.getcwd())
django.setup()

from django.db import IntegrityError, connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from incidents.archive.services import incidents_archive, incidents_restore  # noqa: E402
from incidents.models import Alert, Incident, TimelineEvent  # noqa: E402

old = timezone.now() - timedelta(days=100)
inc = Incident.objects.create(
    title="t",
    severity="SEV3",
    status="resolved",
    grouping_key="g",
    triggered_at=old,
    resolved_at=old,
)
for k in range(3):
    Alert.objects.create(
        incident=inc,
        fingerprint=f"f{k}",
        starts_at=old,
        alertname="A",
        status="resolved",
        labels={"pod": f"p{k}", "n": [1, 2]},
        annotations={"s": "x"},
        grouping_key="g",
        first_received_at=old,
        last_received_at=old,
        am_silenced_by=["s1"],
    )
for k in range(4):
    TimelineEvent.objects.create(
        incident=inc, kind="note", occurred_at=old, message=f"n{k}", payload={"k": k, "s": "v"}
    )


def rows():
    return (
        list(Alert.objects.filter(incident=inc).order_by("id").values()),
        list(TimelineEvent.objects.filter(incident=inc).order_by("id").values()),
    )


before = rows()
batch = incidents_archive(older_than_days=90, actor=None, method="command")
after_archive = rows()
refused = False
try:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM incidents_timelineevent")
except IntegrityError:
    refused = True
result = incidents_restore(actor=None, method="command", batch_id=batch.pk)
alerts, events = rows()
print(
    json.dumps(
        {
            "moved": [batch.incidents, batch.alerts, batch.events],
            "left": [len(after_archive[0]), [e["kind"] for e in after_archive[1]]],
            "delete_refused_after": refused,
            "restored": [result.incidents, result.alerts, result.events],
            "alerts_equal": alerts == before[0],
            "events_equal": events[:4] == before[1],
            "tail": [e["kind"] for e in events[4:]],
        },
        default=str,
    )
)
