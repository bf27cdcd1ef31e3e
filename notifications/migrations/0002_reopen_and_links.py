"""Issue 25: "fired again or reopened" is an event of its own, and notification links
follow how the console is reached (SeenOrigin, while NOTIFY_CONSOLE_URL is unset).

A rule that listed "incident_opened" was told about reopenings until now: it keeps being
told, under the new event (the data step adds "incident_reopened" to it)."""

from django.db import migrations, models

OPENED, REOPENED = "incident_opened", "incident_reopened"


def _rules_keep_reopenings(apps, schema_editor):
    Rule = apps.get_model("notifications", "Rule")
    for rule in Rule.objects.all():
        events = rule.events if isinstance(rule.events, list) else []
        if OPENED in events and REOPENED not in events:
            rule.events = [*events, REOPENED]
            rule.save(update_fields=["events"])


def _rules_back(apps, schema_editor):
    Rule = apps.get_model("notifications", "Rule")
    for rule in Rule.objects.all():
        events = rule.events if isinstance(rule.events, list) else []
        if REOPENED in events:
            rule.events = [e for e in events if e != REOPENED]
            rule.save(update_fields=["events"])


class Migration(migrations.Migration):
    dependencies = [("notifications", "0001_squashed_0004_encrypt_target_secrets")]

    operations = [
        migrations.CreateModel(
            name="SeenOrigin",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("origin", models.CharField(max_length=300)),
                ("seen_at", models.DateTimeField()),
            ],
            options={
                "verbose_name": "seen console address",
                "verbose_name_plural": "seen console addresses",
            },
        ),
        migrations.AlterField(
            model_name="delivery",
            name="event",
            field=models.CharField(
                choices=[
                    ("incident_opened", "Incident opened"),
                    ("incident_reopened", "Incident fired again or reopened"),
                    ("severity_raised", "Severity raised"),
                    ("commander_changed", "Commander changed"),
                    ("incident_mitigated", "Incident mitigated"),
                    ("incident_resolved", "Incident resolved"),
                    ("approval_wanted", "Action awaiting approval"),
                    ("postmortem_in_review", "Postmortem in review"),
                    ("action_item_overdue", "Action item overdue"),
                    ("test", "Test notification"),
                ],
                max_length=32,
                verbose_name="event",
            ),
        ),
        migrations.RunPython(_rules_keep_reopenings, _rules_back),
    ]
