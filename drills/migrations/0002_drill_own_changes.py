"""Issue 25: a drill records what its fault changed and what its end restored, and an
aborted drill is "aborted", not failed. Runs finished before this keep their verdict."""

from django.db import migrations, models


def outcome_from_passed(apps, schema_editor):
    DrillRun = apps.get_model("drills", "DrillRun")
    DrillRun.objects.filter(status="finished", passed=True).update(outcome="passed")
    DrillRun.objects.filter(status="finished", passed=False).update(outcome="failed")


class Migration(migrations.Migration):
    dependencies = [("drills", "0001_moved_from_runbooks")]

    operations = [
        migrations.AddField(
            model_name="drillrun",
            name="outcome",
            field=models.CharField(
                blank=True,
                choices=[("passed", "Passed"), ("failed", "Failed"), ("aborted", "Aborted")],
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="drillrun",
            name="fault_changes",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="drillrun",
            name="restored",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(outcome_from_passed, migrations.RunPython.noop),
    ]
