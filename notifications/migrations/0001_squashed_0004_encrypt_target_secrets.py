"""Notification targets, rules and deliveries, squashed from 0001-0004 (issue 24). A new
database gets them in one step; on a database at the previous release every replaced
migration is applied (0004 encrypted the secrets stored before it), so Django counts
this one as applied too. An older database must first be upgraded to that release."""

import django.db.models.deletion
from django.db import migrations, models

import console.encryption


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("notifications", "0001_initial"),
        ("notifications", "0002_target_language_and_verbose_names"),
        ("notifications", "0003_field_verbose_names"),
        ("notifications", "0004_encrypt_target_secrets"),
    ]

    dependencies = [
        ("incidents", "0001_squashed_0015_append_only_truncate"),
    ]

    operations = [
        migrations.CreateModel(
            name="Target",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100, unique=True, verbose_name="name")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("slack", "Slack (incoming webhook)"),
                            ("webhook", "Webhook (JSON, HMAC-SHA256 signed)"),
                            ("email", "Email"),
                        ],
                        max_length=16,
                        verbose_name="kind",
                    ),
                ),
                ("enabled", models.BooleanField(default=True, verbose_name="enabled")),
                (
                    "url",
                    console.encryption.EncryptedURLField(
                        blank=True,
                        help_text="Slack or webhook targets.",
                        max_length=2000,
                        verbose_name="url",
                    ),
                ),
                (
                    "secret",
                    console.encryption.EncryptedCharField(
                        blank=True,
                        help_text="Webhook targets: the HMAC-SHA256 key, at least 16 characters.",
                        max_length=200,
                        verbose_name="secret",
                    ),
                ),
                (
                    "recipients",
                    models.TextField(
                        blank=True,
                        help_text="Email targets: addresses separated by commas or new lines.",
                        verbose_name="recipients",
                    ),
                ),
                (
                    "language",
                    models.CharField(
                        choices=[("en", "English"), ("zh-hans", "简体中文")],
                        default="en",
                        help_text="The language of its messages and emails.",
                        max_length=16,
                        verbose_name="language",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True, verbose_name="created at")),
                ("updated_at", models.DateTimeField(auto_now=True, verbose_name="updated at")),
            ],
            options={
                "verbose_name": "target",
                "verbose_name_plural": "targets",
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="Rule",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100, verbose_name="name")),
                ("enabled", models.BooleanField(default=True, verbose_name="enabled")),
                (
                    "events",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="Empty: every event.",
                        verbose_name="events",
                    ),
                ),
                (
                    "severities",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="Empty: any severity.",
                        verbose_name="severities",
                    ),
                ),
                (
                    "namespaces",
                    models.CharField(
                        blank=True,
                        help_text="Namespaces separated by commas or spaces; shell patterns such as llm-* work. Empty: any namespace.",
                        max_length=1000,
                        verbose_name="namespaces",
                    ),
                ),
                (
                    "include_drills",
                    models.BooleanField(
                        default=False,
                        help_text="Also notify about drill incidents (rehearsals).",
                        verbose_name="include drills",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "targets",
                    models.ManyToManyField(
                        related_name="rules", to="notifications.target", verbose_name="targets"
                    ),
                ),
            ],
            options={
                "verbose_name": "rule",
                "verbose_name_plural": "rules",
                "ordering": ["name", "id"],
            },
        ),
        migrations.CreateModel(
            name="Delivery",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "event",
                    models.CharField(
                        choices=[
                            ("incident_opened", "Incident opened or reopened"),
                            ("severity_raised", "Severity raised"),
                            ("commander_changed", "Commander changed"),
                            ("incident_mitigated", "Incident mitigated"),
                            ("incident_resolved", "Incident resolved"),
                            ("approval_wanted", "Action awaiting approval"),
                            ("postmortem_in_review", "Postmortem in review"),
                            ("action_item_overdue", "Action item overdue"),
                            ("test", "Test notification"),
                        ],
                        max_length=32,
                        verbose_name="event",
                    ),
                ),
                ("event_key", models.CharField(max_length=200, verbose_name="event key")),
                ("summary", models.CharField(max_length=500, verbose_name="summary")),
                ("body", models.JSONField(default=dict, verbose_name="body")),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Not queued yet"),
                            ("queued", "Queued"),
                            ("retrying", "Retrying"),
                            ("sent", "Sent"),
                            ("failed", "Failed"),
                        ],
                        default="pending",
                        max_length=16,
                        verbose_name="status",
                    ),
                ),
                ("attempts", models.PositiveSmallIntegerField(default=0, verbose_name="attempts")),
                ("last_error", models.TextField(blank=True, verbose_name="last error")),
                ("created_at", models.DateTimeField(db_index=True, verbose_name="created at")),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "last_attempt_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="last attempt at"),
                ),
                ("sent_at", models.DateTimeField(blank=True, null=True, verbose_name="sent at")),
                (
                    "incident",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="notification_deliveries",
                        to="incidents.incident",
                        verbose_name="incident",
                    ),
                ),
                (
                    "rule",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="deliveries",
                        to="notifications.rule",
                        verbose_name="rule",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="deliveries",
                        to="notifications.target",
                        verbose_name="target",
                    ),
                ),
            ],
            options={
                "verbose_name": "delivery",
                "verbose_name_plural": "deliveries",
                "ordering": ["-created_at", "-id"],
                "permissions": [("retry_delivery", "Can send a failed notification again")],
                "indexes": [
                    models.Index(
                        fields=["status", "created_at"], name="notificatio_status_347189_idx"
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("target", "event_key"), name="notification_delivery_once_per_target"
                    )
                ],
            },
        ),
    ]
