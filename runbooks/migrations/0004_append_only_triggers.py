"""The database refuses UPDATE and DELETE on the action-run audit, the kept ConfigMap
revisions and the drill history (their parents are PROTECTed, so no cascade reaches them)."""

from django.db import migrations

from console.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    dependencies = [
        ("runbooks", "0003_guard_watches"),
    ]

    operations = [
        AppendOnlyTriggers("runbooks_actionrunevent"),
        AppendOnlyTriggers("runbooks_configrevision"),
        AppendOnlyTriggers("runbooks_drillrunevent"),
    ]
