"""The old plaintext tokens (rest_framework.authtoken) do not linger: the app is gone
and console's migration drops its table and permissions where an older install has
them. Existing tokens must be reissued."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection

pytestmark = pytest.mark.django_db

migration = importlib.import_module("console.migrations.0008_api_tokens")


def test_the_plaintext_token_app_is_gone():
    assert not apps.is_installed("rest_framework.authtoken")
    assert apps.is_installed("knox")


def test_the_migration_drops_the_plaintext_tokens_and_their_permissions():
    with connection.schema_editor() as editor:
        editor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, user_id integer)"
        )
        editor.execute("INSERT INTO authtoken_token VALUES ('0123456789abcdef', 1)")
    old = ContentType.objects.create(app_label="authtoken", model="token")
    perm = Permission.objects.create(content_type=old, codename="view_token", name="View")
    Group.objects.get(name="admin").permissions.add(perm)

    with connection.schema_editor() as editor:
        migration.drop_plaintext_tokens(apps, editor)

    assert "authtoken_token" not in connection.introspection.table_names()
    assert not ContentType.objects.filter(app_label="authtoken").exists()
    assert not Permission.objects.filter(codename="view_token").exists()
    # Nothing to drop on a new install: the step is a no-op.
    with connection.schema_editor() as editor:
        migration.drop_plaintext_tokens(apps, editor)
