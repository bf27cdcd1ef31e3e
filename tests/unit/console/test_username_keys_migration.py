"""The migration that fills the username keys (console 0007) on a database made before
it: users whose names already collide are both kept (one holds the key, the other is
named in a warning to rename), and the migration does not stop on them."""

import logging

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("console", "0006_service_accounts")]
AFTER = [("console", "0007_username_keys")]
WIDE = "\uff21dmin"  # full-width A
DOTTED = "ADM\u0130N"  # capital I with dot above


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def back_to_0006():
    yield migrate(BEFORE)
    executor = MigrationExecutor(connection)
    migrate(executor.loader.graph.leaf_nodes())  # later migrations, any app, back again


def test_existing_colliding_users_are_kept_and_reported(back_to_0006, caplog):
    apps = back_to_0006
    User = apps.get_model("auth", "User")
    admin = User.objects.create(username="admin", password="!")
    wide = User.objects.create(username=WIDE, password="!")
    turkish = User.objects.create(username=DOTTED, password="!")
    grace = User.objects.create(username="grace", password="!")
    with caplog.at_level(logging.WARNING, logger="console.usernames.keys"):
        apps = migrate(AFTER)
    keys = dict(apps.get_model("console", "UsernameKey").objects.values_list("user_id", "key"))
    assert keys[admin.pk] == "admin"  # the oldest account holds the key
    assert keys[grace.pk] == "grace"
    assert wide.pk not in keys
    assert turkish.pk not in keys
    kept = apps.get_model("auth", "User").objects.filter(username__in=[WIDE, DOTTED])
    assert kept.count() == 2
    (line,) = [r.getMessage() for r in caplog.records if "collide" in r.getMessage()]
    assert f"{WIDE!r} collides with 'admin'" in line
    assert f"{DOTTED!r} collides with 'admin'" in line
