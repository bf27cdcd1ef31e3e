"""The pre-launch checklist, squashed from 0001-0005 (issue 24). A new database gets it in
one step; on a database at the previous release every replaced migration is applied,
so Django counts this one as applied too. An older database must first be upgraded to
that release.

Sign-offs (who vouched for what) refuse UPDATE and DELETE; a verification's item results
refuse UPDATE only, since they go with their verification when beat prunes old ones
(console/append_only.py)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from console.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("readiness", "0001_checklist"),
        ("readiness", "0002_append_only_triggers"),
        ("readiness", "0003_verbose_names"),
        ("readiness", "0004_field_verbose_names"),
        ("readiness", "0005_append_only_truncate"),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Deployment",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("namespace", models.CharField(max_length=253, verbose_name="namespace")),
                ("lws", models.CharField(max_length=253, verbose_name="LWS")),
                ("first_seen_at", models.DateTimeField(verbose_name="first seen at")),
                ("last_seen_at", models.DateTimeField(verbose_name="last seen at")),
                ("present", models.BooleanField(default=True, verbose_name="present")),
            ],
            options={
                "verbose_name": "deployment",
                "verbose_name_plural": "deployments",
                "ordering": ["namespace", "lws"],
                "permissions": [
                    ("verify_deployment", "Can run the checklist verification of a deployment"),
                    ("signoff_deployment", "Can sign off checklist items of a deployment"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("namespace", "lws"), name="readiness_one_per_lws"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Verification",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("done", "Done"),
                            ("failed", "Failed"),
                        ],
                        default="queued",
                        max_length=10,
                    ),
                ),
                ("trigger", models.CharField(default="schedule", max_length=10)),
                ("requested_at", models.DateTimeField()),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("error", models.TextField(blank=True)),
                (
                    "deployment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="verifications",
                        to="readiness.deployment",
                    ),
                ),
                (
                    "requested_by",
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
                "verbose_name": "verification",
                "verbose_name_plural": "verifications",
                "ordering": ["-requested_at", "-id"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ["queued", "running"])),
                        fields=("deployment",),
                        name="readiness_one_active_verification",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="ItemCheck",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "item",
                    models.CharField(
                        choices=[
                            ("autoscaling", "HPA/KEDA with enough cooldown"),
                            ("drain", "Endpoint drain and SIGTERM semantics verified"),
                            ("readiness_probe", "readinessProbe after model load"),
                            ("nccl_watchdog", "NCCL watchdog timeout"),
                            ("dcgm", "DCGM monitoring"),
                            ("oom_restart", "OOM auto-restart"),
                            ("router_fallback", "Router falls back to round-robin"),
                            ("gateway_limits", "Gateway limits on RPS, tokens and concurrency"),
                            ("max_tokens_cap", "A max_tokens cap"),
                            ("client_retries", "Client retries with backoff and jitter"),
                            ("canary", "Canary with rollback thresholds"),
                            ("chaos_drill", "Chaos drill passed"),
                            ("zone_spread", "Spread across zones"),
                            ("runbooks", "Runbooks written"),
                            ("oncall_trained", "On-call trained"),
                        ],
                        max_length=32,
                    ),
                ),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("verified", "Verified"),
                            ("signed_off", "Signed off"),
                            ("failing", "Failing"),
                            ("expired", "Expired"),
                            ("unknown", "Unknown"),
                        ],
                        max_length=10,
                    ),
                ),
                ("summary", models.CharField(max_length=500)),
                ("evidence", models.JSONField(blank=True, default=list)),
                ("source", models.CharField(max_length=20)),
                (
                    "verification",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="checks",
                        to="readiness.verification",
                    ),
                ),
            ],
            options={
                "verbose_name": "item check",
                "verbose_name_plural": "item checks",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("verification", "item"), name="readiness_check_once"
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="deployment",
            name="last_verification",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="readiness.verification",
                verbose_name="last verification",
            ),
        ),
        migrations.CreateModel(
            name="SignOff",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "item",
                    models.CharField(
                        choices=[
                            ("autoscaling", "HPA/KEDA with enough cooldown"),
                            ("drain", "Endpoint drain and SIGTERM semantics verified"),
                            ("readiness_probe", "readinessProbe after model load"),
                            ("nccl_watchdog", "NCCL watchdog timeout"),
                            ("dcgm", "DCGM monitoring"),
                            ("oom_restart", "OOM auto-restart"),
                            ("router_fallback", "Router falls back to round-robin"),
                            ("gateway_limits", "Gateway limits on RPS, tokens and concurrency"),
                            ("max_tokens_cap", "A max_tokens cap"),
                            ("client_retries", "Client retries with backoff and jitter"),
                            ("canary", "Canary with rollback thresholds"),
                            ("chaos_drill", "Chaos drill passed"),
                            ("zone_spread", "Spread across zones"),
                            ("runbooks", "Runbooks written"),
                            ("oncall_trained", "On-call trained"),
                        ],
                        max_length=32,
                        verbose_name="item",
                    ),
                ),
                (
                    "action",
                    models.CharField(
                        choices=[("sign_off", "Signed off"), ("revoke", "Revoked")],
                        max_length=10,
                        verbose_name="action",
                    ),
                ),
                ("at", models.DateTimeField(verbose_name="at")),
                ("note", models.CharField(max_length=1000, verbose_name="note")),
                ("expires_on", models.DateField(blank=True, null=True, verbose_name="expires on")),
                (
                    "by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="by",
                    ),
                ),
                (
                    "deployment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="signoffs",
                        to="readiness.deployment",
                        verbose_name="deployment",
                    ),
                ),
            ],
            options={
                "verbose_name": "sign-off",
                "verbose_name_plural": "sign-offs",
                "ordering": ["-at", "-id"],
                "indexes": [
                    models.Index(
                        fields=["deployment", "item", "at"], name="readiness_s_deploym_f19319_idx"
                    )
                ],
            },
        ),
        AppendOnlyTriggers("readiness_signoff"),
        AppendOnlyTriggers("readiness_itemcheck", delete=False),
    ]
