"""A re-sent alert's receive bookkeeping (last_received_at, receive_count) is updated
on every notification of its group, most of a storm. With neither column in an index
and room left on each page (fillfactor), PostgreSQL updates the row in place (a HOT
update) instead of adding an entry to each of the table's indexes (issue #14)."""

from django.db import migrations, models


def _fillfactor(alerts: int, incidents: int):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for table, percent in (("incidents_alert", alerts), ("incidents_incident", incidents)):
                schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = {percent})")

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0010_similar_incident_indexes"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="alert", name="alert_orphans_by_group"),
        migrations.AddIndex(
            model_name="alert",
            index=models.Index(
                condition=models.Q(("incident__isnull", True)),
                fields=["grouping_key"],
                name="alert_orphans_by_group",
            ),
        ),
        migrations.RunPython(_fillfactor(85, 90), _fillfactor(100, 100), elidable=True),
    ]
