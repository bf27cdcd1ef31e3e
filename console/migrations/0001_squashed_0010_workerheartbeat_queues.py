"""The console's tables, squashed from 0001-0010 (issue 24). A new database gets them in
one step; on a database at the previous release every replaced migration is applied,
so Django counts this one as applied too. An older database must first be upgraded to
that release (docs/operations.md). The sign-in audit log is append-only
(console/append_only.py), and the service accounts exist from the migrations on
(console/service_accounts.py)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from console.append_only import AppendOnlyTriggers
from console.service_accounts import service_accounts_ensure
from console.usernames.keys import keys_fill


def service_accounts_create(apps, schema_editor):
    service_accounts_ensure(
        user_model=apps.get_model("auth", "User"),
        permission_model=apps.get_model("auth", "Permission"),
        identity_model=apps.get_model("console", "OidcIdentity"),
    )


def username_keys_fill(apps, schema_editor):
    keys_fill(apps.get_model("auth", "User"), apps.get_model("console", "UsernameKey"))


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("console", "0001_worker_heartbeat"),
        ("console", "0002_sign_in_audit"),
        ("console", "0003_oidc_identity"),
        ("console", "0004_user_preference"),
        ("console", "0005_field_verbose_names"),
        ("console", "0006_service_accounts"),
        ("console", "0007_username_keys"),
        ("console", "0008_api_tokens"),
        ("console", "0009_append_only_truncate"),
        ("console", "0010_workerheartbeat_queues"),
    ]

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="UsernameKey",
            fields=[
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="username_key",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="user",
                    ),
                ),
                ("key", models.CharField(max_length=600, unique=True, verbose_name="username key")),
            ],
            options={
                "verbose_name": "username key",
                "verbose_name_plural": "username keys",
            },
        ),
        migrations.CreateModel(
            name="WorkerHeartbeat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "hostname",
                    models.CharField(max_length=255, unique=True, verbose_name="hostname"),
                ),
                ("pid", models.PositiveIntegerField(verbose_name="PID")),
                (
                    "started_at",
                    models.DateTimeField(
                        help_text="When this worker last started consuming.",
                        verbose_name="started at",
                    ),
                ),
                (
                    "last_seen",
                    models.DateTimeField(
                        db_index=True, help_text="Its latest heartbeat.", verbose_name="last seen"
                    ),
                ),
                (
                    "stopped_at",
                    models.DateTimeField(
                        blank=True,
                        help_text="Set when the worker shut down cleanly.",
                        null=True,
                        verbose_name="stopped at",
                    ),
                ),
                (
                    "queues",
                    models.CharField(
                        blank=True,
                        db_default="",
                        default="",
                        help_text="The queues it consumes, comma-separated; empty: not recorded (every queue).",
                        max_length=255,
                        verbose_name="queues",
                    ),
                ),
            ],
            options={
                "verbose_name": "worker heartbeat",
                "verbose_name_plural": "worker heartbeats",
                "ordering": ("-last_seen",),
            },
        ),
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                ("token_key", models.CharField(db_index=True, max_length=25)),
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("digest", models.CharField(max_length=128, unique=True)),
                (
                    "client",
                    models.CharField(
                        blank=True,
                        help_text="What the token is for, e.g. grafana or ci.",
                        max_length=64,
                        verbose_name="client",
                    ),
                ),
                ("created", models.DateTimeField(auto_now_add=True, verbose_name="created")),
                ("expiry", models.DateTimeField(blank=True, null=True, verbose_name="expires")),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="auth_token_set",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="user",
                    ),
                ),
            ],
            options={
                "verbose_name": "API token",
                "verbose_name_plural": "API tokens",
                "ordering": ("-created", "-id"),
            },
        ),
        migrations.CreateModel(
            name="UserPreference",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "language",
                    models.CharField(
                        blank=True,
                        choices=[("en", "English"), ("zh-hans", "简体中文")],
                        max_length=16,
                        verbose_name="language",
                    ),
                ),
                ("show_utc", models.BooleanField(default=False, verbose_name="show times in UTC")),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="console_preference",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "user preference",
                "verbose_name_plural": "user preferences",
            },
        ),
        migrations.CreateModel(
            name="AuditEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("at", models.DateTimeField(default=django.utils.timezone.now, verbose_name="at")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("login", "Logged in"),
                            ("logout", "Logged out"),
                            ("login_failed", "Login failed"),
                            ("role_changed", "Role changed"),
                            ("token_revoked", "API token revoked"),
                        ],
                        db_index=True,
                        max_length=16,
                        verbose_name="kind",
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
                            ("api", "REST API"),
                            ("admin", "Django admin"),
                            ("account", "Account change"),
                        ],
                        max_length=16,
                        verbose_name="method",
                    ),
                ),
                (
                    "username",
                    models.CharField(
                        blank=True, db_index=True, max_length=150, verbose_name="username"
                    ),
                ),
                (
                    "ip",
                    models.GenericIPAddressField(blank=True, null=True, verbose_name="IP address"),
                ),
                (
                    "user_agent",
                    models.CharField(blank=True, max_length=512, verbose_name="user agent"),
                ),
                ("reason", models.CharField(blank=True, max_length=500, verbose_name="reason")),
                ("old", models.JSONField(blank=True, null=True, verbose_name="old")),
                ("new", models.JSONField(blank=True, null=True, verbose_name="new")),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="user",
                    ),
                ),
            ],
            options={
                "verbose_name": "audit event",
                "verbose_name_plural": "audit events",
                "ordering": ["-at", "-id"],
                "indexes": [models.Index(fields=["-at", "-id"], name="console_audit_at_idx")],
            },
        ),
        migrations.CreateModel(
            name="OidcIdentity",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("issuer", models.CharField(max_length=255, verbose_name="issuer")),
                ("subject", models.CharField(max_length=255, verbose_name="subject")),
                (
                    "created_at",
                    models.DateTimeField(
                        default=django.utils.timezone.now, verbose_name="created at"
                    ),
                ),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="oidc_identity",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="user",
                    ),
                ),
            ],
            options={
                "verbose_name": "single sign-on identity",
                "verbose_name_plural": "single sign-on identities",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("issuer", "subject"), name="console_oidc_identity_unique"
                    )
                ],
            },
        ),
        AppendOnlyTriggers("console_auditevent"),
        # Undoing them keeps the accounts and keys: runs and timelines point at the accounts.
        migrations.RunPython(service_accounts_create, migrations.RunPython.noop, elidable=False),
        migrations.RunPython(username_keys_fill, migrations.RunPython.noop, elidable=False),
    ]
