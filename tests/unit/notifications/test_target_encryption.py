"""Secrets at rest (console/encryption.py): a target's URL and signing secret are stored
Fernet-encrypted, read back decrypted, survive a key rotation, and a key that opens none
of them is an error naming what to fix, never the ciphertext used as a URL or a key."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection
from django.urls import reverse

from console.encryption import FERNET_PREFIX, UndecryptableSecret
from notifications.models import Target, TargetKind
from notifications.transports import signature
from tests.unit.notifications.conftest import SECRET, send
from tests.unit.notifications.test_delivery import delivery_for

pytestmark = pytest.mark.django_db

SLACK_URL = "https://hooks.slack.com/services/T0SECRET/B0SECRET/tokenTOKENtoken"
KEY_A = "key-a-0123456789-abcdefghijklmnopqrstuvwxyz"
KEY_B = "key-b-9876543210-zyxwvutsrqponmlkjihgfedcba"


def raw(target: Target) -> tuple[str, str]:
    """The row as one `SELECT` reads it, past the ORM."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT url, secret FROM notifications_target WHERE id = %s", [target.pk])
        return cursor.fetchone()


def make_targets() -> list[Target]:
    return [
        Target.objects.create(name="slack", kind=TargetKind.SLACK, url=SLACK_URL),
        Target.objects.create(
            name="hook", kind=TargetKind.WEBHOOK, url="https://hooks.example/in", secret=SECRET
        ),
    ]


def test_a_select_shows_no_plaintext_and_the_orm_reads_the_values(webhook_target):
    slack = Target.objects.create(name="slack", kind=TargetKind.SLACK, url=SLACK_URL)
    url, secret = raw(webhook_target)
    assert url.startswith(FERNET_PREFIX)
    assert secret.startswith(FERNET_PREFIX)
    assert "127.0.0.1" not in url
    assert SECRET not in secret
    slack_url, slack_secret = raw(slack)
    assert slack_url.startswith(FERNET_PREFIX)
    assert "T0SECRET" not in slack_url
    assert slack_secret == ""  # nothing to hide: an empty value stays empty
    got = Target.objects.get(pk=webhook_target.pk)
    assert (got.url, got.secret) == (webhook_target.url, SECRET)
    assert Target.objects.get(pk=slack.pk).url == SLACK_URL
    assert Target.objects.get(pk=slack.pk).destination == "Slack webhook at hooks.slack.com"


def test_a_plaintext_row_still_reads_so_the_migration_can_encrypt_it():
    target = Target.objects.create(name="old", kind=TargetKind.SLACK, url=SLACK_URL)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE notifications_target SET url = %s WHERE id = %s", [SLACK_URL, target.pk]
        )
    assert Target.objects.get(pk=target.pk).url == SLACK_URL


def test_a_key_that_opens_nothing_is_an_error_naming_the_fix(settings, webhook_target):
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B]
    with pytest.raises(UndecryptableSecret) as caught:
        Target.objects.get(pk=webhook_target.pk)
    message = str(caught.value)
    assert "notifications.Target.url" in message
    assert "FIELD_ENCRYPTION_KEYS" in message
    assert "SECRET_KEY_FALLBACKS" in message


def test_a_changed_secret_key_needs_the_old_one_in_the_fallbacks(settings, webhook_target):
    old = settings.SECRET_KEY
    settings.SECRET_KEY = "a-new-secret-key-" + "x" * 40
    with pytest.raises(UndecryptableSecret):
        Target.objects.get(pk=webhook_target.pk)
    settings.SECRET_KEY_FALLBACKS = [old]
    assert Target.objects.get(pk=webhook_target.pk).secret == SECRET


def test_rotation_re_encrypts_every_value_with_the_first_key(settings, capsys):
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    targets = make_targets()
    before = {t.pk: raw(t) for t in targets}
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B, KEY_A]  # the new key first, the old one after
    call_command("secrets_rotate")
    assert "3 values" in capsys.readouterr().out  # two URLs and one secret
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B]  # the old key dropped
    for target in targets:
        assert raw(target) != before[target.pk]
        got = Target.objects.get(pk=target.pk)
        assert (got.url, got.secret) == (target.url, target.secret)
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    with pytest.raises(UndecryptableSecret):
        list(Target.objects.all())


def test_rotation_refuses_a_value_no_key_opens_and_changes_nothing(settings):
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    targets = make_targets()
    before = [raw(t) for t in targets]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B]  # the old key forgotten
    with pytest.raises(UndecryptableSecret):
        call_command("secrets_rotate")
    assert [raw(t) for t in targets] == before


def test_the_model_field_still_validates_a_url():
    # An email target: Target.clean() leaves its URL alone, so this is the field's own.
    target = Target(name="bad", kind=TargetKind.EMAIL, recipients="a@example.com", url="nope")
    with pytest.raises(ValidationError) as caught:
        target.full_clean()
    assert list(caught.value.message_dict) == ["url"]


def test_the_admin_stores_what_it_is_given_encrypted(client, people, receiver):
    client.force_login(people["ada"])
    response = client.post(
        reverse("admin:notifications_target_add"),
        {"name": "w", "kind": "webhook", "url": f"{receiver.url}/x", "secret": SECRET,
         "recipients": "", "enabled": "on"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    target = Target.objects.get(name="w")
    assert (target.url, target.secret) == (f"{receiver.url}/x", SECRET)
    assert all(value.startswith(FERNET_PREFIX) for value in raw(target))
    listing = client.get(reverse("admin:notifications_target_changelist")).content.decode()
    assert f"{receiver.url}/x" in listing  # the destination column, decrypted


def test_the_webhook_is_posted_to_the_decrypted_url_and_signed_with_the_secret(
    receiver, webhook_target
):
    assert raw(webhook_target)[0].startswith(FERNET_PREFIX)
    send(delivery_for(Target.objects.get(pk=webhook_target.pk)).pk)
    (got,) = receiver.received
    assert got.path == "/hook"
    stamp = got.headers["X-Console-Timestamp"]
    assert got.headers["X-Console-Signature"] == signature(SECRET, stamp, got.body)


def test_validating_one_target_leaves_others_readable(monkeypatch, receiver, webhook_target):
    """The field is shared by every thread: a row read while another target is validated
    (a threaded server) must come back decrypted, not as its ciphertext."""
    field = Target._meta.get_field("url")
    seen = []

    def validate(value, model_instance):
        seen.append(Target.objects.get(pk=webhook_target.pk).url)  # "another thread"

    monkeypatch.setattr(field, "validate", validate)
    Target(name="new", kind=TargetKind.WEBHOOK, url=f"{receiver.url}/y", secret=SECRET).full_clean()
    assert seen == [webhook_target.url]
