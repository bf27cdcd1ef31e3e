"""The sign-in audit log: append-only (the database refuses UPDATE and DELETE), so a
user with rows is PROTECTed, deactivated rather than deleted."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from console.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0001_worker_heartbeat"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="AuditEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("login", "Logged in"),
                            ("logout", "Logged out"),
                            ("login_failed", "Login failed"),
                            ("role_changed", "Role changed"),
                        ],
                        db_index=True,
                        max_length=16,
                    ),
                ),
                (
                    "method",
                    models.CharField(
                        choices=[
                            ("password", "Password"),
                            ("oidc", "Single sign-on"),
                            ("api_token", "API token request"),
                            ("session", "Session"),
                            ("groups", "Group membership"),
                        ],
                        max_length=16,
                    ),
                ),
                ("username", models.CharField(blank=True, db_index=True, max_length=150)),
                ("ip", models.GenericIPAddressField(blank=True, null=True)),
                ("user_agent", models.CharField(blank=True, max_length=512)),
                ("reason", models.CharField(blank=True, max_length=500)),
                ("old", models.JSONField(blank=True, null=True)),
                ("new", models.JSONField(blank=True, null=True)),
                (
                    "user",
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
                "ordering": ["-at", "-id"],
                "indexes": [models.Index(fields=["-at", "-id"], name="console_audit_at_idx")],
            },
        ),
        AppendOnlyTriggers("console_auditevent"),
    ]
