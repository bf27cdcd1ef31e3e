"""Ingestion at the database's speed (issue #14).

- Incident.alert_digest and last_notified_at: an unchanged repeat from Alertmanager is
  recognised and applied in one statement (incidents/services/ingestion_sql.py).
- Webhook receipt bodies compressed with lz4 instead of pglz on PostgreSQL 14+ built with
  lz4: every body is kept, and pglz cost about twice the CPU per 25 kB body for the same
  size. Only new values are written with lz4; old ones stay readable as they are.
"""

from django.db import migrations, models


def _receipt_body_compression(method: str):
    def run(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "postgresql" or connection.pg_version < 140000:
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT %s = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'",
                [method],
            )
            row = cursor.fetchone()
            if row and row[0]:
                cursor.execute(
                    "ALTER TABLE incidents_webhookreceipt ALTER COLUMN body "
                    f"SET COMPRESSION {method}"
                )

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0008_silence_permission"),
    ]

    operations = [
        migrations.AddField(
            model_name="incident",
            name="alert_digest",
            field=models.CharField(blank=True, default="", editable=False, max_length=32),
        ),
        migrations.AddField(
            model_name="incident",
            name="last_notified_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(
            _receipt_body_compression("lz4"),
            _receipt_body_compression("pglz"),
            elidable=True,
        ),
    ]
