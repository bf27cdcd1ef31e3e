"""The action and drill models left this app for the actions and drills apps (issue 24):
their content types follow them, and with the types every permission granted on them
(a group's or a user's grant of runbooks.approve_actionrun is then actions.approve_actionrun).

Only a database from the previous release has types to move: there the new apps'
0001_moved_from_runbooks count as applied (they replace runbooks 0001-0008, which made the
tables), so this is the step that runs. On a new database there is nothing to move yet."""

from django.db import migrations

MOVED = {
    "actions": ["actionrun", "actionrunevent", "configrevision", "guardwatch"],
    "drills": ["drillplan", "drillrun", "drillrunevent"],
}


def _content_types_follow(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    types = content_type.objects.using(schema_editor.connection.alias)
    for app_label, models in MOVED.items():
        old = list(
            types.filter(app_label="runbooks", model__in=models).values_list("model", flat=True)
        )
        # A partial `migrate` (one app) runs post_migrate, which may have made the new app's
        # types already: those are seconds old and hold only what the role sync granted, so
        # they give way to the old ones, which carry every grant.
        types.filter(app_label=app_label, model__in=old).delete()
        types.filter(app_label="runbooks", model__in=old).update(app_label=app_label)


def _content_types_return(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    types = content_type.objects.using(schema_editor.connection.alias)
    for app_label, models in MOVED.items():
        types.filter(app_label=app_label, model__in=models).update(app_label="runbooks")


class Migration(migrations.Migration):
    dependencies = [
        ("runbooks", "0001_squashed_0008_append_only_truncate"),
        ("contenttypes", "0002_remove_content_type_name"),
        # Deleting a type cascades to its permissions and their grants.
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(_content_types_follow, _content_types_return)]
