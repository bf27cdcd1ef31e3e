from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0002_runbook_timeline_kinds"),
    ]

    operations = [
        migrations.AlterField(
            model_name="timelineevent",
            name="kind",
            field=models.CharField(
                choices=[
                    ("incident_opened", "Incident opened"),
                    ("alert_fired", "Alert fired"),
                    ("alert_resolved", "Alert resolved"),
                    ("status_changed", "Status changed"),
                    ("severity_changed", "Severity changed"),
                    ("commander_changed", "Commander changed"),
                    ("note", "Note"),
                    ("webhook_replayed", "Webhook replayed"),
                    ("runbook_changed", "Runbook changed"),
                    ("diagnosis_confirmed", "Diagnosis confirmed"),
                    ("runbook_step", "Runbook step done"),
                    ("action", "Action"),
                    ("postmortem", "Postmortem"),
                    ("action_item", "Action item"),
                ],
                db_index=True,
                max_length=32,
            ),
        ),
    ]
