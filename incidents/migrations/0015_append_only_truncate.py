"""The database refuses TRUNCATE of the timeline and of the webhook receipts, whose
UPDATE and DELETE triggers (0007) it bypasses: receipts go only when pruned, row by row.
PostgreSQL only; SQLite has no TRUNCATE (console/append_only.py)."""

from django.db import migrations

from console.append_only import AppendOnlyTruncateGuard


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0014_field_verbose_names"),
    ]

    operations = [
        AppendOnlyTruncateGuard("incidents_timelineevent"),
        AppendOnlyTruncateGuard("incidents_webhookreceipt"),
    ]
