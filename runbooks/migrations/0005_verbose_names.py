"""Model verbose names, marked for translation (the admin shows them); no schema change."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("runbooks", "0004_append_only_triggers"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="actionrun",
            options={
                "ordering": ["-requested_at", "-id"],
                "permissions": [
                    ("request_actionrun", "Can request a remediation action"),
                    ("approve_actionrun", "Can approve or reject another person's action"),
                ],
                "verbose_name": "action run",
                "verbose_name_plural": "action runs",
            },
        ),
        migrations.AlterModelOptions(
            name="actionrunevent",
            options={
                "ordering": ["occurred_at", "id"],
                "verbose_name": "action run event",
                "verbose_name_plural": "action run events",
            },
        ),
        migrations.AlterModelOptions(
            name="configrevision",
            options={
                "ordering": ["-captured_at", "-id"],
                "verbose_name": "ConfigMap revision",
                "verbose_name_plural": "ConfigMap revisions",
            },
        ),
        migrations.AlterModelOptions(
            name="drillplan",
            options={
                "ordering": ["runbook", "title", "id"],
                "permissions": [("run_drill", "Can plan, start and stop chaos drills")],
                "verbose_name": "drill plan",
                "verbose_name_plural": "drill plans",
            },
        ),
        migrations.AlterModelOptions(
            name="drillrun",
            options={
                "ordering": ["-started_at", "-id"],
                "verbose_name": "drill run",
                "verbose_name_plural": "drill runs",
            },
        ),
        migrations.AlterModelOptions(
            name="drillrunevent",
            options={
                "ordering": ["occurred_at", "id"],
                "verbose_name": "drill run event",
                "verbose_name_plural": "drill run events",
            },
        ),
        migrations.AlterModelOptions(
            name="guardwatch",
            options={
                "ordering": ["-changed_at", "-id"],
                "verbose_name": "guard watch",
                "verbose_name_plural": "guard watches",
            },
        ),
    ]
