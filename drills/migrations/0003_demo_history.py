from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("drills", "0002_drill_own_changes")]

    operations = [
        migrations.AddField(
            model_name="drillplan",
            name="is_demo",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="drillrun",
            name="is_demo",
            field=models.BooleanField(default=False),
        ),
    ]
