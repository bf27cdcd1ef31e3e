"""One unique key per username (console/usernames/keys.py), so accounts whose names only look
different cannot coexist. Existing users get theirs, oldest first; where two names
already collide both accounts are kept, the later one without a key, and a warning
names them so an admin can rename one."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def fill(apps, schema_editor):
    from console.usernames.keys import keys_fill

    keys_fill(apps.get_model("auth", "User"), apps.get_model("console", "UsernameKey"))


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0006_service_accounts"),
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
                (
                    "key",
                    models.CharField(max_length=600, unique=True, verbose_name="username key"),
                ),
            ],
            options={"verbose_name": "username key", "verbose_name_plural": "username keys"},
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
