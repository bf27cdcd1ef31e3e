"""The database refuses TRUNCATE of the action-run audit, the kept ConfigMap revisions
and the drill history, which would bypass their UPDATE and DELETE triggers (0004).
PostgreSQL only; SQLite has no TRUNCATE (console/append_only.py)."""

from django.db import migrations

from console.append_only import AppendOnlyTruncateGuard


class Migration(migrations.Migration):
    dependencies = [
        ("runbooks", "0007_auto_triage_due"),
    ]

    operations = [
        AppendOnlyTruncateGuard("runbooks_actionrunevent"),
        AppendOnlyTruncateGuard("runbooks_configrevision"),
        AppendOnlyTruncateGuard("runbooks_drillrunevent"),
    ]
