# Written by hand (issue 29): the incident list's order and filters at a million
# incidents, and its search.

from django.db import migrations, models

# The list's search is `UPPER(column::text) LIKE UPPER('%text%')` (Django's icontains):
# trigram indexes on those expressions let PostgreSQL find a rare word, or none, without
# reading every incident. PostgreSQL only (pg_trgm is a trusted extension since 13: the
# database's owner may create it); SQLite (make run) searches by scanning, as before.
TRIGRAM_COLUMNS = ("title", "namespace", "runbook")


def _trigram_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        for column in TRIGRAM_COLUMNS:
            cursor.execute(
                f"CREATE INDEX IF NOT EXISTS incident_{column}_trgm ON incidents_incident "  # noqa: S608
                f"USING gin ((UPPER(({column})::text)) gin_trgm_ops)"
            )


def _drop_trigram_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for column in TRIGRAM_COLUMNS:
            cursor.execute(f"DROP INDEX IF EXISTS incident_{column}_trgm")


class Migration(migrations.Migration):
    dependencies = [("incidents", "0006_incident_archive")]

    operations = [
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(fields=["-triggered_at", "-id"], name="incident_newest"),
        ),
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(
                condition=models.Q(("status", "resolved"), _negated=True),
                fields=["-triggered_at", "-id"],
                name="incident_open_newest",
            ),
        ),
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(
                fields=["status", "-triggered_at", "-id"], name="incident_status_newest"
            ),
        ),
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(
                fields=["severity", "-triggered_at", "-id"], name="incident_severity_newest"
            ),
        ),
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(
                fields=["runbook", "-triggered_at", "-id"], name="incident_runbook_triggered"
            ),
        ),
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(fields=["namespace"], name="incident_namespace"),
        ),
        migrations.AddIndex(
            model_name="incident",
            index=models.Index(
                condition=models.Q(("status", "resolved")),
                fields=["-resolved_at", "-id"],
                name="incident_resolved_newest",
            ),
        ),
        migrations.AddIndex(
            model_name="webhookreceipt",
            index=models.Index(
                condition=models.Q(("outcome__in", ["rejected", "failed"])),
                fields=["-received_at", "-id"],
                name="receipt_dead_newest",
            ),
        ),
        migrations.RunPython(_trigram_indexes, _drop_trigram_indexes, elidable=False),
    ]
