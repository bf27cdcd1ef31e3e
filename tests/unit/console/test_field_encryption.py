"""console/encryption.py: the keys are the library's own derivation (so values written by
django-fernet-encrypted-fields read here and back), the first key encrypts, and the deploy
check refuses a missing or weak FIELD_ENCRYPTION_KEYS. The stored values themselves are
tested with the model that has them (tests/unit/notifications/test_target_encryption.py)."""

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from encrypted_fields.fields import EncryptedCharField as LibraryCharField

from console import encryption
from console.encryption import EncryptedCharField, field_encryption_keys_check

KEY_A = "key-a-0123456789-abcdefghijklmnopqrstuvwxyz"
KEY_B = "key-b-9876543210-zyxwvutsrqponmlkjihgfedcba"


def test_the_keys_are_the_librarys_derivation(settings):
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A, KEY_B]
    settings.SALT_KEY = [KEY_A, KEY_B]
    settings.SECRET_KEY_FALLBACKS = ["an-older-secret-key"]
    assert encryption.fernet_keys() == LibraryCharField().keys
    # Either way round: the library's field reads ours, ours reads the library's.
    theirs = LibraryCharField().get_prep_value("hello")
    assert EncryptedCharField().to_python(theirs) == "hello"
    ours = EncryptedCharField().get_prep_value("hello")
    assert LibraryCharField().to_python(ours) == "hello"


def test_the_first_key_encrypts(settings):
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    token = EncryptedCharField().get_prep_value("hello")
    first = Fernet(encryption.fernet_keys()[0])
    assert first.decrypt(token.encode()) == b"hello"


def test_no_key_is_a_configuration_error_naming_the_setting(settings):
    settings.FIELD_ENCRYPTION_KEYS = []
    with pytest.raises(ImproperlyConfigured, match="FIELD_ENCRYPTION_KEYS"):
        EncryptedCharField().get_prep_value("hello")


def test_a_fernet_token_is_told_from_plaintext(settings):
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    assert encryption.is_token(EncryptedCharField().get_prep_value("x"))
    for plain in ("", "https://hooks.slack.com/services/T/B/x", "gAAAAAnot-a-token", "s3cret"):
        assert not encryption.is_token(plain)


@pytest.mark.parametrize(
    ("keys", "ids"),
    [
        ([], ["encryption.E001"]),
        (["short"], ["encryption.E002"]),
        (["a" * 40], ["encryption.E002"]),  # long, but one character
        ([KEY_A], []),
        ([KEY_A, "old-short"], []),  # an old key only decrypts, until rotated away
    ],
)
def test_the_deploy_check(settings, keys, ids):
    settings.FIELD_ENCRYPTION_KEYS = keys
    assert [e.id for e in field_encryption_keys_check()] == ids


def test_the_deploy_check_refuses_the_secret_key_itself(settings):
    settings.FIELD_ENCRYPTION_KEYS = [settings.SECRET_KEY]
    assert [e.id for e in field_encryption_keys_check()] == ["encryption.E002"]
