"""Action runs, their events, ConfigMap revisions and guard watches, moved here from the
runbooks app (issue 24); their tables keep the runbooks_* names (db_table).

On a new database this migration makes them. On a database at the previous release
runbooks 0001-0008 made them: every migration in `replaces` is applied there, so Django
counts this one as applied and leaves the tables as they are, and runbooks
0002_actions_and_drills_moved_out moves their content types (with every permission
granted on them). An older database must first be upgraded to that release.

The run events and the kept revisions are append-only (console/append_only.py)."""

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
            name="ActionRun",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(db_index=True, max_length=32, verbose_name="kind")),
                ("target", models.CharField(max_length=255, verbose_name="target")),
                ("params", models.JSONField(default=dict, verbose_name="parameters")),
                (
                    "idempotency_key",
                    models.CharField(max_length=100, verbose_name="idempotency key"),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("awaiting_approval", "Awaiting approval"),
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("succeeded", "Succeeded"),
                            ("failed", "Failed"),
                            ("cancelled", "Cancelled"),
                            ("rejected", "Rejected"),
                        ],
                        default="queued",
                        max_length=20,
                        verbose_name="status",
                    ),
                ),
                ("requested_at", models.DateTimeField(verbose_name="requested at")),
                (
                    "requires_approval",
                    models.BooleanField(default=False, verbose_name="requires approval"),
                ),
                (
                    "approval_reason",
                    models.CharField(blank=True, max_length=300, verbose_name="approval reason"),
                ),
                (
                    "decided_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="decided at"),
                ),
                (
                    "decision_note",
                    models.CharField(blank=True, max_length=500, verbose_name="decision note"),
                ),
                (
                    "queued_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="queued at"),
                ),
                (
                    "started_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="started at"),
                ),
                (
                    "finished_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="finished at"),
                ),
                ("preview", models.JSONField(blank=True, default=dict, verbose_name="preview")),
                ("before", models.JSONField(blank=True, null=True, verbose_name="before")),
                ("plan", models.JSONField(blank=True, null=True, verbose_name="plan")),
                ("after", models.JSONField(blank=True, null=True, verbose_name="after")),
                (
                    "verification",
                    models.CharField(blank=True, max_length=500, verbose_name="verification"),
                ),
                ("phase", models.CharField(blank=True, max_length=16, verbose_name="phase")),
                ("attempts", models.PositiveSmallIntegerField(default=0, verbose_name="attempts")),
                (
                    "claimed_by",
                    models.CharField(blank=True, max_length=200, verbose_name="claimed by"),
                ),
                (
                    "lease_expires_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="lease expires at"),
                ),
                ("error", models.TextField(blank=True, verbose_name="error")),
                (
                    "error_code",
                    models.CharField(blank=True, max_length=32, verbose_name="error code"),
                ),
                ("runbook", models.CharField(blank=True, max_length=100, verbose_name="runbook")),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "decided_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="decided by",
                    ),
                ),
                (
                    "incident",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="action_runs",
                        to="incidents.incident",
                        verbose_name="incident",
                    ),
                ),
                (
                    "requested_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="requested by",
                    ),
                ),
                (
                    "undo_of",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="undos",
                        to="actions.actionrun",
                        verbose_name="undo of",
                    ),
                ),
            ],
            options={
                "verbose_name": "action run",
                "verbose_name_plural": "action runs",
                "db_table": "runbooks_actionrun",
                "ordering": ["-requested_at", "-id"],
                "permissions": [
                    ("request_actionrun", "Can request a remediation action"),
                    ("approve_actionrun", "Can approve or reject another person's action"),
                ],
                "indexes": [
                    models.Index(
                        fields=["incident", "requested_at"], name="runbooks_ac_inciden_959414_idx"
                    ),
                    models.Index(
                        fields=["status", "requested_at"], name="runbooks_ac_status_993a5b_idx"
                    ),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(
                            ("status__in", ["awaiting_approval", "queued", "running"])
                        ),
                        fields=("target",),
                        name="action_run_one_active_per_target",
                    ),
                    models.UniqueConstraint(
                        fields=("requested_by", "idempotency_key"),
                        name="action_run_idempotency_key_per_user",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="ActionRunEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("occurred_at", models.DateTimeField(verbose_name="occurred at")),
                (
                    "status_from",
                    models.CharField(blank=True, max_length=20, verbose_name="status from"),
                ),
                (
                    "status_to",
                    models.CharField(blank=True, max_length=20, verbose_name="status to"),
                ),
                ("message", models.TextField(verbose_name="message")),
                ("payload", models.JSONField(blank=True, default=dict, verbose_name="payload")),
                (
                    "actor",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="actor",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="events",
                        to="actions.actionrun",
                        verbose_name="run",
                    ),
                ),
            ],
            options={
                "verbose_name": "action run event",
                "verbose_name_plural": "action run events",
                "db_table": "runbooks_actionrunevent",
                "ordering": ["occurred_at", "id"],
                "indexes": [
                    models.Index(
                        fields=["run", "occurred_at", "id"], name="runbooks_ac_run_id_70d359_idx"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="ConfigRevision",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("namespace", models.CharField(max_length=253, verbose_name="namespace")),
                ("name", models.CharField(max_length=253, verbose_name="name")),
                ("data", models.JSONField(default=dict, verbose_name="data")),
                (
                    "resource_version",
                    models.CharField(blank=True, max_length=64, verbose_name="resource version"),
                ),
                ("captured_at", models.DateTimeField(verbose_name="captured at")),
                ("reason", models.CharField(max_length=200, verbose_name="reason")),
                (
                    "run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="actions.actionrun",
                        verbose_name="run",
                    ),
                ),
            ],
            options={
                "verbose_name": "ConfigMap revision",
                "verbose_name_plural": "ConfigMap revisions",
                "db_table": "runbooks_configrevision",
                "ordering": ["-captured_at", "-id"],
                "indexes": [
                    models.Index(
                        fields=["namespace", "name", "captured_at"],
                        name="runbooks_co_namespa_74b225_idx",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="GuardWatch",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("runbook", models.CharField(max_length=100)),
                ("subject", models.CharField(max_length=255)),
                ("labels", models.JSONField(default=dict)),
                ("changed_at", models.DateTimeField()),
                ("ends_at", models.DateTimeField()),
                ("interval_seconds", models.PositiveIntegerField()),
                (
                    "verdict",
                    models.CharField(
                        choices=[
                            ("watching", "Watching"),
                            ("passed", "Passed"),
                            ("breached", "Breached"),
                            ("unknown", "Unknown"),
                        ],
                        default="watching",
                        max_length=10,
                    ),
                ),
                ("verdict_reason", models.CharField(blank=True, max_length=1000)),
                ("signals", models.JSONField(default=list)),
                ("evaluations", models.PositiveIntegerField(default=0)),
                ("unknown_evaluations", models.PositiveIntegerField(default=0)),
                ("last_evaluated_at", models.DateTimeField(blank=True, null=True)),
                ("last_error", models.CharField(blank=True, max_length=500)),
                (
                    "outcome",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("", "None"),
                            ("undo_requested", "Undo requested"),
                            ("paged", "Commander paged"),
                        ],
                        default="",
                        max_length=16,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "incident",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="guard_watches",
                        to="incidents.incident",
                    ),
                ),
                (
                    "revision",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="actions.configrevision",
                    ),
                ),
                (
                    "run",
                    models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="guard",
                        to="actions.actionrun",
                    ),
                ),
                (
                    "undo_run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="actions.actionrun",
                    ),
                ),
            ],
            options={
                "verbose_name": "guard watch",
                "verbose_name_plural": "guard watches",
                "db_table": "runbooks_guardwatch",
                "ordering": ["-changed_at", "-id"],
                "indexes": [
                    models.Index(
                        fields=["verdict", "ends_at"], name="runbooks_gu_verdict_3b73ea_idx"
                    )
                ],
            },
        ),
        AppendOnlyTriggers("runbooks_actionrunevent"),
        AppendOnlyTriggers("runbooks_configrevision"),
    ]
