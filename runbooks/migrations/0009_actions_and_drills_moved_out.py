"""The action and drill models now belong to the actions and drills apps (their
0001_moved_from_runbooks); nothing in the database changes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("actions", "0001_moved_from_runbooks"),
        ("drills", "0001_moved_from_runbooks"),
        ("runbooks", "0008_append_only_truncate"),
    ]

    state_operations = [
        migrations.RemoveField(
            model_name="configrevision",
            name="run",
        ),
        migrations.RemoveField(
            model_name="guardwatch",
            name="undo_run",
        ),
        migrations.RemoveField(
            model_name="guardwatch",
            name="run",
        ),
        migrations.RemoveField(
            model_name="actionrunevent",
            name="run",
        ),
        migrations.RemoveField(
            model_name="actionrunevent",
            name="actor",
        ),
        migrations.RemoveField(
            model_name="guardwatch",
            name="revision",
        ),
        migrations.RemoveField(
            model_name="drillplan",
            name="created_by",
        ),
        migrations.RemoveField(
            model_name="drillrun",
            name="plan",
        ),
        migrations.RemoveField(
            model_name="drillrun",
            name="incident",
        ),
        migrations.RemoveField(
            model_name="drillrun",
            name="started_by",
        ),
        migrations.RemoveField(
            model_name="drillrun",
            name="stop_requested_by",
        ),
        migrations.RemoveField(
            model_name="drillrunevent",
            name="run",
        ),
        migrations.RemoveField(
            model_name="drillrunevent",
            name="actor",
        ),
        migrations.RemoveField(
            model_name="guardwatch",
            name="incident",
        ),
        migrations.DeleteModel(
            name="ActionRun",
        ),
        migrations.DeleteModel(
            name="ActionRunEvent",
        ),
        migrations.DeleteModel(
            name="ConfigRevision",
        ),
        migrations.DeleteModel(
            name="DrillPlan",
        ),
        migrations.DeleteModel(
            name="DrillRun",
        ),
        migrations.DeleteModel(
            name="DrillRunEvent",
        ),
        migrations.DeleteModel(
            name="GuardWatch",
        ),
    ]

    operations = [
        # The tables stay where they are (db_table): only Django's idea of which app owns
        # the models changes.
        migrations.SeparateDatabaseAndState(state_operations=state_operations),
    ]
