"""The database refuses UPDATE and DELETE on sign-offs (the history of who vouched for what),
and UPDATE on a verification's stored item results. Those results are derived data that
go with their verification when beat prunes old ones (readiness.services), so DELETE
stays allowed there."""

from django.db import migrations

from console.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    dependencies = [
        ("readiness", "0001_checklist"),
    ]

    operations = [
        AppendOnlyTriggers("readiness_signoff"),
        AppendOnlyTriggers("readiness_itemcheck", delete=False),
    ]
