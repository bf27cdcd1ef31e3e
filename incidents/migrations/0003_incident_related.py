import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """Related incidents (incidents/related/): the lead an incident is part of, and when
    and by whom it was linked or merged. Nullable columns only: no table rewrite."""

    dependencies = [
        ("incidents", "0002_alert_alertmanager_state"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="incident",
            name="related_to",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="related_incidents",
                to="incidents.incident",
                verbose_name="part of",
            ),
        ),
        migrations.AddField(
            model_name="incident",
            name="linked_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="linked at"),
        ),
        migrations.AddField(
            model_name="incident",
            name="linked_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="linked by",
            ),
        ),
        migrations.AddField(
            model_name="incident",
            name="merged_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="merged at"),
        ),
    ]
