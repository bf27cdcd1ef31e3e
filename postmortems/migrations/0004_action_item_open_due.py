# Written by hand (issue 29): open action items in due order, for the overdue report.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("postmortems", "0003_draft_language")]

    operations = [
        migrations.AddIndex(
            model_name="actionitem",
            index=models.Index(
                condition=models.Q(("status__in", ["open", "in_progress"])),
                fields=["due_date", "id"],
                name="action_item_open_due",
            ),
        ),
    ]
