"""Indexes for "similar past incidents" (postmortems/similar/selectors.py, issue #15 item 3).

Each answers "the newest earlier incidents with ..." in id order, so the query stops after
a few rows whatever the number of incidents: the runbook on the incident, and the
(namespace, lws) and node labels of its alerts. The alert indexes are partial: alerts
without an lws or node label cost no index write during a storm.
"""

import django.db.models.fields.json
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0009_ingest_repeat_digest"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="alert",
            index=models.Index(
                django.db.models.fields.json.KeyTransform("namespace", "labels"),
                django.db.models.fields.json.KeyTransform("lws", "labels"),
                models.F("incident"),
                condition=models.Q(("labels__has_key", "lws")),
                name="alert_label_lws",
            ),
        ),
        migrations.AddIndex(
            model_name="alert",
            index=models.Index(
                django.db.models.fields.json.KeyTransform("node", "labels"),
                models.F("incident"),
                condition=models.Q(("labels__has_key", "node")),
                name="alert_label_node",
            ),
        ),
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(fields=["runbook", "-id"], name="incident_runbook_newest"),
        ),
    ]
