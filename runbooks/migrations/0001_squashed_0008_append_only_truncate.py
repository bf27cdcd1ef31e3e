"""Auto-triage's queue, squashed from 0001-0008 (issue 24). Those migrations also made the
action and drill tables, which now belong to the actions and drills apps (their
0001_moved_from_runbooks replace the same migrations; the tables keep their names). A
database at the previous release has every replaced migration applied, so Django counts
this one as applied; an older database must first be upgraded to that release."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("runbooks", "0001_action_runs"),
        ("runbooks", "0002_drills"),
        ("runbooks", "0003_guard_watches"),
        ("runbooks", "0004_append_only_triggers"),
        ("runbooks", "0005_verbose_names"),
        ("runbooks", "0006_field_verbose_names"),
        ("runbooks", "0007_auto_triage_due"),
        ("runbooks", "0008_append_only_truncate"),
    ]

    dependencies = [
        ("incidents", "0001_squashed_0015_append_only_truncate"),
    ]

    operations = [
        migrations.CreateModel(
            name="AutoTriageDue",
            fields=[
                (
                    "incident",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="incidents.incident",
                        verbose_name="incident",
                    ),
                ),
                (
                    "requested_at",
                    models.DateTimeField(
                        db_index=True,
                        default=django.utils.timezone.now,
                        verbose_name="requested at",
                    ),
                ),
            ],
            options={
                "verbose_name": "auto-triage due",
                "verbose_name_plural": "auto-triage due",
            },
        ),
    ]
