"""The database refuses UPDATE and DELETE on review comments and the edit history. They
cascade from their postmortem, which the console never deletes: deleting one that has a
history is refused too."""

from django.db import migrations

from console.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    dependencies = [
        ("postmortems", "0002_content_revisions"),
    ]

    operations = [
        AppendOnlyTriggers("postmortems_reviewcomment"),
        AppendOnlyTriggers("postmortems_postmortemedit"),
    ]
