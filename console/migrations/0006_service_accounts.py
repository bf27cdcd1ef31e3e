"""The service accounts (console/service_accounts.py) exist from here on, with no usable
password: the guard's account is no longer made the first time the guard acts, when a
person signing in first under its name could have become it. An account a person
already holds under the name is renamed aside (logged)."""

from django.db import migrations


def create(apps, schema_editor):
    from console.service_accounts import service_accounts_ensure

    service_accounts_ensure(
        user_model=apps.get_model("auth", "User"),
        permission_model=apps.get_model("auth", "Permission"),
        identity_model=apps.get_model("console", "OidcIdentity"),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0005_field_verbose_names"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    # Undoing it keeps the accounts: runs and timelines point at them.
    operations = [migrations.RunPython(create, migrations.RunPython.noop, elidable=False)]
