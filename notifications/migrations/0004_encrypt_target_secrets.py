"""A target's URL and signing secret are stored Fernet-encrypted (console/encryption.py):
the columns become text (a token is longer than its plaintext) and the rows already
stored are encrypted. Back: the rows are written out in plaintext, then the columns go
back to their lengths. Both ways need FIELD_ENCRYPTION_KEYS (and the SECRET_KEY the
values were written under) when a target exists."""

from django.db import migrations

import console.encryption

FIELDS = ("url", "secret")


def encrypt(apps, schema_editor) -> None:
    Target = apps.get_model("notifications", "Target")
    manager = Target._base_manager.using(schema_editor.connection.alias)
    # The encrypted fields read plaintext as it is and write a token.
    for pk, *values in manager.order_by("pk").values_list("pk", *FIELDS):
        changes = {name: value for name, value in zip(FIELDS, values, strict=True) if value}
        if changes:
            manager.filter(pk=pk).update(**changes)


def decrypt(apps, schema_editor) -> None:
    Target = apps.get_model("notifications", "Target")
    connection = schema_editor.connection
    manager = Target._base_manager.using(connection.alias)
    qn = connection.ops.quote_name
    sets = ", ".join(f"{qn(name)} = %s" for name in FIELDS)
    # Past the fields, which would encrypt again: what they read, written as it is.
    with connection.cursor() as cursor:
        for pk, *values in manager.order_by("pk").values_list("pk", *FIELDS):
            cursor.execute(
                f"UPDATE {qn(Target._meta.db_table)} SET {sets} WHERE {qn('id')} = %s",  # noqa: S608
                [*values, pk],
            )


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0003_field_verbose_names"),
    ]

    operations = [
        migrations.AlterField(
            model_name="target",
            name="secret",
            field=console.encryption.EncryptedCharField(
                blank=True,
                help_text="Webhook targets: the HMAC-SHA256 key, at least 16 characters.",
                max_length=200,
                verbose_name="secret",
            ),
        ),
        migrations.AlterField(
            model_name="target",
            name="url",
            field=console.encryption.EncryptedURLField(
                blank=True,
                help_text="Slack or webhook targets.",
                max_length=2000,
                verbose_name="url",
            ),
        ),
        migrations.RunPython(encrypt, decrypt, elidable=False),
    ]
