"""The database refuses TRUNCATE of the sign-in audit log (0002's triggers), which would
bypass its UPDATE and DELETE triggers. PostgreSQL only; SQLite has no TRUNCATE
(console/append_only.py)."""

from django.db import migrations

from console.append_only import AppendOnlyTruncateGuard


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0008_api_tokens"),
    ]

    operations = [
        AppendOnlyTruncateGuard("console_auditevent"),
    ]
