"""The database refuses TRUNCATE of sign-offs and of the verifications' item results
(0002's triggers): item results go only with their verification, row by row. PostgreSQL
only; SQLite has no TRUNCATE (console/append_only.py)."""

from django.db import migrations

from console.append_only import AppendOnlyTruncateGuard


class Migration(migrations.Migration):
    dependencies = [
        ("readiness", "0004_field_verbose_names"),
    ]

    operations = [
        AppendOnlyTruncateGuard("readiness_signoff"),
        AppendOnlyTruncateGuard("readiness_itemcheck"),
    ]
