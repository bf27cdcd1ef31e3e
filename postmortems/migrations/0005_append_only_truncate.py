"""The database refuses TRUNCATE of review comments and the edit history, which would
bypass their UPDATE and DELETE triggers (0003). PostgreSQL only; SQLite has no TRUNCATE
(console/append_only.py)."""

from django.db import migrations

from console.append_only import AppendOnlyTruncateGuard


class Migration(migrations.Migration):
    dependencies = [
        ("postmortems", "0004_postmortem_language"),
    ]

    operations = [
        AppendOnlyTruncateGuard("postmortems_reviewcomment"),
        AppendOnlyTruncateGuard("postmortems_postmortemedit"),
    ]
