"""Drill plans, runs and their events moved here from the runbooks app (issue 24); their
tables keep their names."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = ["drillplan", "drillrun", "drillrunevent"]


def _content_types_follow(apps, schema_editor):
    # Permissions hang on content types: moving the type keeps every group's grants.
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="runbooks", model__in=MOVED).update(app_label="drills")


def _content_types_return(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="drills", model__in=MOVED).update(app_label="runbooks")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("runbooks", "0008_append_only_truncate"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("incidents", "0015_append_only_truncate"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    state_operations = [
        migrations.CreateModel(
            name="DrillPlan",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("runbook", models.SlugField(max_length=100)),
                ("title", models.CharField(max_length=200)),
                ("namespace", models.CharField(max_length=253)),
                ("lws", models.CharField(max_length=253)),
                ("adapter", models.CharField(default="simulator", max_length=32)),
                ("fault", models.CharField(max_length=100)),
                ("max_duration_seconds", models.PositiveIntegerField(default=1800)),
                ("stop_on_real_sev1", models.BooleanField(default=True)),
                ("detect_within_seconds", models.PositiveIntegerField(default=300)),
                ("acknowledge_within_seconds", models.PositiveIntegerField(default=300)),
                ("recover_within_seconds", models.PositiveIntegerField(default=1200)),
                ("expected_branch", models.CharField(blank=True, max_length=100)),
                ("created_at", models.DateTimeField()),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "drill plan",
                "verbose_name_plural": "drill plans",
                "db_table": "runbooks_drillplan",
                "ordering": ["runbook", "title", "id"],
                "permissions": [("run_drill", "Can plan, start and stop chaos drills")],
            },
        ),
        migrations.CreateModel(
            name="DrillRun",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("runbook", models.SlugField(max_length=100)),
                ("namespace", models.CharField(max_length=253)),
                ("lws", models.CharField(max_length=253)),
                ("plan_snapshot", models.JSONField(default=dict)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("starting", "Starting"),
                            ("running", "Running"),
                            ("stopping", "Stopping"),
                            ("finished", "Finished"),
                            ("failed", "Could not run"),
                        ],
                        default="starting",
                        max_length=16,
                    ),
                ),
                ("started_at", models.DateTimeField()),
                ("injected_at", models.DateTimeField(blank=True, null=True)),
                ("ended_at", models.DateTimeField(blank=True, null=True)),
                ("stop_reason", models.CharField(blank=True, max_length=300)),
                ("passed", models.BooleanField(blank=True, null=True)),
                ("scorecard", models.JSONField(blank=True, default=dict)),
                ("error", models.TextField(blank=True)),
                (
                    "incident",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="drill_runs",
                        to="incidents.incident",
                    ),
                ),
                (
                    "plan",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="runs",
                        to="drills.drillplan",
                    ),
                ),
                (
                    "started_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "stop_requested_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "drill run",
                "verbose_name_plural": "drill runs",
                "db_table": "runbooks_drillrun",
                "ordering": ["-started_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="DrillRunEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("occurred_at", models.DateTimeField()),
                ("kind", models.CharField(max_length=32)),
                ("message", models.TextField()),
                ("payload", models.JSONField(blank=True, default=dict)),
                (
                    "actor",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="events",
                        to="drills.drillrun",
                    ),
                ),
            ],
            options={
                "verbose_name": "drill run event",
                "verbose_name_plural": "drill run events",
                "db_table": "runbooks_drillrunevent",
                "ordering": ["occurred_at", "id"],
            },
        ),
        migrations.AddIndex(
            model_name="drillrun",
            index=models.Index(
                fields=["namespace", "lws", "passed", "ended_at"],
                name="runbooks_dr_namespa_d8edbd_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="drillrun",
            index=models.Index(
                fields=["runbook", "passed", "ended_at"], name="runbooks_dr_runbook_4e3cb5_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="drillrun",
            index=models.Index(fields=["status"], name="runbooks_dr_status_6b843a_idx"),
        ),
        migrations.AddConstraint(
            model_name="drillrun",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", ["starting", "running", "stopping"])),
                fields=("namespace", "lws"),
                name="drill_run_one_active_per_target",
            ),
        ),
        migrations.AddIndex(
            model_name="drillrunevent",
            index=models.Index(
                fields=["run", "occurred_at", "id"], name="runbooks_dr_run_id_94123a_idx"
            ),
        ),
    ]

    operations = [
        # The tables stay where they are (db_table): only Django's idea of which app owns
        # the models changes.
        migrations.SeparateDatabaseAndState(state_operations=state_operations),
        migrations.RunPython(_content_types_follow, _content_types_return),
    ]
