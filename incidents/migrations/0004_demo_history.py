from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("incidents", "0003_incident_related")]

    operations = [
        migrations.AddField(
            model_name="incident",
            name="is_demo",
            field=models.BooleanField(db_index=True, default=False),
        ),
    ]
