"""notifications 0004 encrypts the URLs and secrets already stored in plaintext, and
migrating back writes them out in plaintext again."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from console.encryption import FERNET_PREFIX
from notifications.models import Target

BEFORE = ("notifications", "0003_field_verbose_names")
SLACK_URL = "https://hooks.slack.com/services/T0OLD/B0OLD/plaintextTOKEN"
HOOK_URL = "https://hooks.example/in?token=query-secret"
SECRET = "an-old-plaintext-signing-secret"


def migrate(*targets) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(list(targets) or executor.loader.graph.leaf_nodes())


def raw_rows() -> dict[str, tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, url, secret FROM notifications_target ORDER BY name")
        return {name: (url, secret) for name, url, secret in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
def test_existing_rows_are_encrypted_and_decrypted_back():
    migrate(BEFORE)
    try:
        now = timezone.now()
        with connection.cursor() as cursor:
            for name, kind, url, secret in (
                ("hook", "webhook", HOOK_URL, SECRET),
                ("slack", "slack", SLACK_URL, ""),
                ("mail", "email", "", ""),
            ):
                cursor.execute(
                    "INSERT INTO notifications_target (name, kind, enabled, url, secret,"
                    " recipients, language, created_at, updated_at)"
                    " VALUES (%s, %s, true, %s, %s, '', 'en', %s, %s)",
                    [name, kind, url, secret, now, now],
                )
        migrate()  # forward: 0004 and whatever follows it
        rows = raw_rows()
        assert rows["hook"][0].startswith(FERNET_PREFIX)
        assert rows["hook"][1].startswith(FERNET_PREFIX)
        assert rows["slack"][0].startswith(FERNET_PREFIX)
        assert rows["mail"] == ("", "")
        text = repr(rows)
        assert "T0OLD" not in text
        assert "query-secret" not in text
        assert SECRET not in text
        hook = Target.objects.get(name="hook")
        assert (hook.url, hook.secret) == (HOOK_URL, SECRET)
        assert Target.objects.get(name="slack").url == SLACK_URL

        migrate(BEFORE)  # backward: plaintext again
        assert raw_rows() == {
            "hook": (HOOK_URL, SECRET),
            "slack": (SLACK_URL, ""),
            "mail": ("", ""),
        }
    finally:
        migrate()
