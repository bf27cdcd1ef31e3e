from django.db import migrations, models


class Migration(migrations.Migration):
    """The guard judges what the change caused (issue 25): a settling period, and the
    changed pods against the unchanged ones."""

    dependencies = [("actions", "0001_moved_from_runbooks")]

    operations = [
        migrations.AddField(
            model_name="guardwatch",
            name="settles_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="guardwatch",
            name="split",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
