from django.db import migrations, models


class Migration(migrations.Migration):
    """Alertmanager's own view of each alert, as the console last reconciled it
    (incidents/alertmanager_view/). Nullable columns only: no table rewrite, and ingest's
    PostgreSQL insert, which names every column, sends them as NULL."""

    dependencies = [("incidents", "0001_squashed_0015_append_only_truncate")]

    operations = [
        migrations.AddField(
            model_name="alert",
            name="am_state",
            field=models.CharField(
                blank=True,
                choices=[
                    ("firing", "Firing"),
                    ("silenced", "Silenced"),
                    ("inhibited", "Inhibited"),
                    ("resolved", "Resolved"),
                    ("gone", "No longer listed"),
                ],
                max_length=12,
                null=True,
                verbose_name="state in Alertmanager",
            ),
        ),
        migrations.AddField(
            model_name="alert",
            name="am_silenced_by",
            field=models.JSONField(blank=True, null=True, verbose_name="silenced by"),
        ),
        migrations.AddField(
            model_name="alert",
            name="am_inhibited_by",
            field=models.JSONField(blank=True, null=True, verbose_name="inhibited by"),
        ),
        migrations.AddField(
            model_name="alert",
            name="am_asked_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="alert",
            name="am_checked_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="alert",
            name="am_seen_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="alert",
            name="am_error",
            field=models.TextField(blank=True, editable=False, null=True),
        ),
    ]
