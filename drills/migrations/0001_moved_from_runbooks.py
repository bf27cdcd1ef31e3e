"""Drill plans, runs and run events, moved here from the runbooks app (issue 24); their
tables keep the runbooks_* names (db_table).

On a new database this migration makes them. On a database at the previous release
runbooks 0001-0008 made them: every migration in `replaces` is applied there, so Django
counts this one as applied and leaves the tables as they are, and runbooks
0002_actions_and_drills_moved_out moves their content types (with every permission
granted on them). An older database must first be upgraded to that release.

The run events are append-only (console/append_only.py)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from console.append_only import AppendOnlyTriggers


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
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
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
                "indexes": [
                    models.Index(
                        fields=["namespace", "lws", "passed", "ended_at"],
                        name="runbooks_dr_namespa_d8edbd_idx",
                    ),
                    models.Index(
                        fields=["runbook", "passed", "ended_at"],
                        name="runbooks_dr_runbook_4e3cb5_idx",
                    ),
                    models.Index(fields=["status"], name="runbooks_dr_status_6b843a_idx"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ["starting", "running", "stopping"])),
                        fields=("namespace", "lws"),
                        name="drill_run_one_active_per_target",
                    )
                ],
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
                "indexes": [
                    models.Index(
                        fields=["run", "occurred_at", "id"], name="runbooks_dr_run_id_94123a_idx"
                    )
                ],
            },
        ),
        AppendOnlyTriggers("runbooks_drillrunevent"),
    ]
