"""Model verbose names, marked for translation (the admin shows them); no schema change."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("readiness", "0002_append_only_triggers"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="deployment",
            options={
                "ordering": ["namespace", "lws"],
                "permissions": [
                    ("verify_deployment", "Can run the checklist verification of a deployment"),
                    ("signoff_deployment", "Can sign off checklist items of a deployment"),
                ],
                "verbose_name": "deployment",
                "verbose_name_plural": "deployments",
            },
        ),
        migrations.AlterModelOptions(
            name="itemcheck",
            options={"verbose_name": "item check", "verbose_name_plural": "item checks"},
        ),
        migrations.AlterModelOptions(
            name="signoff",
            options={
                "ordering": ["-at", "-id"],
                "verbose_name": "sign-off",
                "verbose_name_plural": "sign-offs",
            },
        ),
        migrations.AlterModelOptions(
            name="verification",
            options={
                "ordering": ["-requested_at", "-id"],
                "verbose_name": "verification",
                "verbose_name_plural": "verifications",
            },
        ),
    ]
