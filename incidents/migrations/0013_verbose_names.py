"""Model verbose names, marked for translation (the admin shows them); no schema change."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0012_repeat_apply_function"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="alert",
            options={
                "ordering": ["-starts_at", "id"],
                "verbose_name": "alert",
                "verbose_name_plural": "alerts",
            },
        ),
        migrations.AlterModelOptions(
            name="incident",
            options={
                "ordering": ["-triggered_at", "-id"],
                "permissions": [
                    ("acknowledge_incident", "Can acknowledge an incident"),
                    ("mitigate_incident", "Can mark an incident mitigated"),
                    ("resolve_incident", "Can resolve an incident"),
                    ("reopen_incident", "Can reopen a resolved incident"),
                    ("add_note", "Can add a note to an incident timeline"),
                    ("take_command", "Can take command of an incident nobody commands"),
                    ("assign_commander", "Can assign any user as incident commander"),
                    (
                        "silence_alerts",
                        "Can silence and unsilence an incident's alerts in Alertmanager",
                    ),
                ],
                "verbose_name": "incident",
                "verbose_name_plural": "incidents",
            },
        ),
        migrations.AlterModelOptions(
            name="timelineevent",
            options={
                "ordering": ["occurred_at", "id"],
                "verbose_name": "timeline event",
                "verbose_name_plural": "timeline events",
            },
        ),
        migrations.AlterModelOptions(
            name="webhookreceipt",
            options={
                "ordering": ["-received_at", "-id"],
                "permissions": [
                    ("replay_webhookreceipt", "Can replay a dead-lettered webhook body")
                ],
                "verbose_name": "webhook receipt",
                "verbose_name_plural": "webhook receipts",
            },
        ),
    ]
