"""Postmortems, their timeline, charts, reviews, edit history and action items, squashed
from 0001-0005 (issue 24). A new database gets them in one step; on a database at the
previous release every replaced migration is applied, so Django counts this one as
applied too. An older database must first be upgraded to that release.

Review comments and the edit history are append-only (console/append_only.py); they
cascade from their postmortem, which the console never deletes, so deleting one that
has a history is refused too."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from console.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("postmortems", "0001_postmortems"),
        ("postmortems", "0002_content_revisions"),
        ("postmortems", "0003_append_only_triggers"),
        ("postmortems", "0004_postmortem_language"),
        ("postmortems", "0005_append_only_truncate"),
    ]

    dependencies = [
        ("incidents", "0001_squashed_0015_append_only_truncate"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Postmortem",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("title", models.CharField(max_length=300)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("draft", "Draft"),
                            ("in_review", "In review"),
                            ("published", "Published"),
                        ],
                        default="draft",
                        max_length=16,
                    ),
                ),
                (
                    "draft_state",
                    models.CharField(
                        choices=[
                            ("pending", "Being drafted"),
                            ("ready", "Ready"),
                            ("failed", "Drafting failed"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("draft_error", models.TextField(blank=True)),
                ("summary", models.TextField(blank=True)),
                ("impact", models.TextField(blank=True)),
                ("root_cause", models.TextField(blank=True)),
                ("contributing_factors", models.TextField(blank=True)),
                ("lessons_learned", models.TextField(blank=True)),
                ("impact_data", models.JSONField(blank=True, default=dict)),
                ("runbook", models.CharField(blank=True, max_length=100)),
                ("category", models.CharField(blank=True, max_length=32)),
                ("suggestions", models.JSONField(blank=True, default=list)),
                (
                    "language",
                    models.CharField(
                        choices=[("en", "English"), ("zh-hans", "简体中文")],
                        default="en",
                        max_length=16,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("drafted_at", models.DateTimeField(blank=True, null=True)),
                ("review_requested_at", models.DateTimeField(blank=True, null=True)),
                ("published_at", models.DateTimeField(blank=True, null=True)),
                ("version", models.PositiveIntegerField(default=1)),
                ("revision", models.PositiveIntegerField(default=1)),
                ("published_revision", models.PositiveIntegerField(blank=True, null=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "incident",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="postmortem",
                        to="incidents.incident",
                    ),
                ),
                (
                    "published_by",
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
                "ordering": ["-created_at", "-id"],
                "permissions": [
                    ("draft_postmortem", "Can draft and edit postmortems"),
                    ("review_postmortem", "Can review postmortems"),
                    ("publish_postmortem", "Can publish postmortems"),
                ],
                "indexes": [
                    models.Index(
                        fields=["status", "published_at"], name="postmortems_status_a7ebcc_idx"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="MetricSnapshot",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("chart_id", models.CharField(max_length=64)),
                ("title", models.CharField(max_length=200)),
                ("unit", models.CharField(blank=True, max_length=32)),
                ("promql", models.TextField()),
                ("start", models.DateTimeField()),
                ("end", models.DateTimeField()),
                ("step_seconds", models.PositiveIntegerField()),
                ("series", models.JSONField(default=list)),
                ("error", models.TextField(blank=True)),
                ("captured_at", models.DateTimeField()),
                (
                    "postmortem",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="snapshots",
                        to="postmortems.postmortem",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
            },
        ),
        migrations.CreateModel(
            name="ActionItem",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("title", models.CharField(max_length=300)),
                ("description", models.TextField(blank=True)),
                ("due_date", models.DateField()),
                (
                    "priority",
                    models.CharField(
                        choices=[
                            ("P1", "P1 (urgent)"),
                            ("P2", "P2"),
                            ("P3", "P3"),
                            ("P4", "P4 (someday)"),
                        ],
                        default="P2",
                        max_length=2,
                    ),
                ),
                (
                    "category",
                    models.CharField(
                        choices=[
                            ("monitoring", "Monitoring"),
                            ("automation", "Automation"),
                            ("drill", "Drill"),
                            ("config", "Config"),
                            ("capacity", "Capacity"),
                            ("process", "Process"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("open", "Open"),
                            ("in_progress", "In progress"),
                            ("done", "Done"),
                            ("wont_do", "Won't do"),
                        ],
                        default="open",
                        max_length=16,
                    ),
                ),
                ("wont_do_reason", models.TextField(blank=True)),
                ("external_url", models.URLField(blank=True, max_length=500)),
                ("namespace", models.CharField(blank=True, db_index=True, max_length=253)),
                ("runbook", models.CharField(blank=True, db_index=True, max_length=100)),
                ("source", models.CharField(blank=True, max_length=200)),
                ("created_at", models.DateTimeField()),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("closed_at", models.DateTimeField(blank=True, null=True)),
                ("last_reminded_on", models.DateField(blank=True, null=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "incident",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="action_items",
                        to="incidents.incident",
                    ),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="action_items",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "postmortem",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="action_items",
                        to="postmortems.postmortem",
                    ),
                ),
            ],
            options={
                "ordering": ["due_date", "id"],
                "permissions": [("manage_actionitem", "Can create and edit action items")],
                "indexes": [
                    models.Index(
                        fields=["status", "due_date"], name="postmortems_status_57577a_idx"
                    ),
                    models.Index(fields=["owner", "status"], name="postmortems_owner_i_b8508a_idx"),
                    models.Index(
                        fields=["category", "status"], name="postmortems_categor_3c0456_idx"
                    ),
                    models.Index(fields=["created_at"], name="postmortems_created_2755f8_idx"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("source", ""), _negated=True),
                        fields=("postmortem", "source"),
                        name="action_item_suggestion_once",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="PostmortemEdit",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("at", models.DateTimeField()),
                ("field", models.CharField(max_length=64)),
                ("old", models.TextField(blank=True)),
                ("new", models.TextField(blank=True)),
                (
                    "editor",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "postmortem",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="edits",
                        to="postmortems.postmortem",
                    ),
                ),
            ],
            options={
                "ordering": ["at", "id"],
            },
        ),
        migrations.CreateModel(
            name="PostmortemTimelineEntry",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("occurred_at", models.DateTimeField()),
                (
                    "source",
                    models.CharField(
                        choices=[
                            ("event", "Timeline event"),
                            ("alert", "Alert"),
                            ("action", "Action run"),
                            ("manual", "Added by hand"),
                        ],
                        max_length=16,
                    ),
                ),
                ("source_id", models.BigIntegerField(blank=True, null=True)),
                ("kind", models.CharField(blank=True, max_length=32)),
                ("original_text", models.TextField()),
                ("text", models.TextField()),
                ("included", models.BooleanField(default=True)),
                (
                    "postmortem",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="entries",
                        to="postmortems.postmortem",
                    ),
                ),
            ],
            options={
                "ordering": ["occurred_at", "id"],
                "indexes": [
                    models.Index(
                        fields=["postmortem", "occurred_at", "id"],
                        name="postmortems_postmor_9f8371_idx",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="ReviewComment",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("section", models.CharField(blank=True, max_length=32)),
                ("text", models.TextField()),
                ("created_at", models.DateTimeField()),
                (
                    "author",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "postmortem",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="comments",
                        to="postmortems.postmortem",
                    ),
                ),
            ],
            options={
                "ordering": ["created_at", "id"],
            },
        ),
        migrations.CreateModel(
            name="Reviewer",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("requested", "Review requested"),
                            ("approved", "Approved"),
                            ("changes", "Changes requested"),
                        ],
                        default="requested",
                        max_length=16,
                    ),
                ),
                ("decided_at", models.DateTimeField(blank=True, null=True)),
                ("approved_revision", models.PositiveIntegerField(blank=True, null=True)),
                (
                    "postmortem",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="reviewers",
                        to="postmortems.postmortem",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("postmortem", "user"), name="reviewer_once")
                ],
            },
        ),
        migrations.CreateModel(
            name="Notification",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(max_length=32)),
                ("message", models.CharField(max_length=500)),
                ("link", models.CharField(blank=True, max_length=300)),
                ("created_at", models.DateTimeField()),
                ("read_at", models.DateTimeField(blank=True, null=True)),
                ("dedupe_key", models.CharField(max_length=200)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="notifications",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [
                    models.Index(fields=["user", "read_at"], name="postmortems_user_id_63e998_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("user", "dedupe_key"), name="notification_once")
                ],
            },
        ),
        AppendOnlyTriggers("postmortems_reviewcomment"),
        AppendOnlyTriggers("postmortems_postmortemedit"),
    ]
