"""API tokens (django-rest-knox, console/api_tokens/models.py), and the end of the old
plaintext ones: rest_framework.authtoken kept every key in clear, so its table, its
migration history and its permissions are dropped where an older install has them.
Existing tokens must be reissued (POST /api/v1/auth/token/)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

OLD_TABLE = "authtoken_token"


def drop_plaintext_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE in connection.introspection.table_names():
        schema_editor.execute(f"DROP TABLE {schema_editor.quote_name(OLD_TABLE)}")
    schema_editor.execute("DELETE FROM django_migrations WHERE app = %s", ["authtoken"])
    # Their permissions go with their content type (and so leave every group).
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.using(connection.alias).filter(app_label="authtoken").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0007_username_keys"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditevent",
            name="kind",
            field=models.CharField(
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
        migrations.AlterField(
            model_name="auditevent",
            name="method",
            field=models.CharField(
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
        # The old keys cannot be carried over (only a hash is kept now): nothing to undo.
        migrations.RunPython(drop_plaintext_tokens, migrations.RunPython.noop, elidable=False),
    ]
