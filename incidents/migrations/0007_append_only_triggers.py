"""The database refuses to rewrite history: no UPDATE or DELETE of timeline rows (so no
cascade from deleting an incident that has a timeline), and no UPDATE of a webhook
receipt's record of what arrived and what became of it. Receipts are still pruned after
retention, and a replay's `replay_of` still becomes NULL when its original is pruned.
A timeline event's actor is PROTECTed: SET_NULL would be an UPDATE the trigger refuses."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from console.append_only import AppendOnlyTriggers

RECEIPT_RECORD = (
    "received_at",
    "source",
    "remote_addr",
    "user_agent",
    "body",
    "body_raw",
    "body_bytes",
    "outcome",
    "http_status",
    "error",
    "error_field",
    "group_key",
    "alert_count",
    "incident_ids",
)


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0006_timeline_kinds_registered"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="timelineevent",
            name="actor",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        AppendOnlyTriggers("incidents_timelineevent"),
        AppendOnlyTriggers("incidents_webhookreceipt", delete=False, columns=RECEIPT_RECORD),
    ]
