from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("postmortems", "0001_squashed_0005_append_only_truncate")]

    operations: list = []
