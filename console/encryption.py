"""Secrets at rest: model fields stored Fernet-encrypted.

The fields are django-fernet-encrypted-fields' (jazzband), with its key derivation: one
Fernet key per (secret key, salt) pair, PBKDF2-SHA256 over SECRET_KEY then each of
SECRET_KEY_FALLBACKS, salted with each of FIELD_ENCRYPTION_KEYS (the library's SALT_KEY).
The first pair encrypts; every pair decrypts. What differs from the library's fields,
which hand back the ciphertext itself when no key opens it (the console would then post
to a ciphertext URL or sign with a ciphertext key):

- a value that is a Fernet token no key opens raises `UndecryptableSecret`, naming the
  field and the settings to fix; a value that is not a token (a row written before its
  column was encrypted) reads as it is, so a migration can encrypt it;
- the keys follow the settings as they are now (the library caches them per field), so a
  rotation (`manage.py secrets_rotate`) and the tests' `settings` fixture take effect;
- clean() validates the plaintext without the library's thread-unsafe "already
  decrypted" flag on the shared field.

An empty value is stored empty: there is nothing to hide, and the columns are NOT NULL.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Iterator
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register
from django.core.exceptions import ImproperlyConfigured
from django.db import models, transaction
from encrypted_fields.fields import EncryptedFieldMixin as LibraryMixin

# Every Fernet token starts with its version byte 0x80 and a timestamp: "gAAAAA" in base64.
FERNET_PREFIX = "gAAAAA"
# Version (1) + timestamp (8) + IV (16) + HMAC (32), around a ciphertext of 16-byte blocks.
_TOKEN_OVERHEAD = 57
KEY_MIN_CHARS = 32
KEY_MIN_DISTINCT = 10
# The library's parameters (encrypted_fields/fields.py): values it wrote must read here.
_ITERATIONS = 100_000


class UndecryptableSecret(ImproperlyConfigured):
    """A stored value is encrypted with a key the settings no longer hold."""


def is_token(value: str) -> bool:
    """Whether `value` has a Fernet token's shape (not whether a key of ours opens it)."""
    if not value.startswith(FERNET_PREFIX):
        return False
    try:
        raw = base64.urlsafe_b64decode(value.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return False
    size = len(raw) - _TOKEN_OVERHEAD
    return raw[0] == 0x80 and size > 0 and size % 16 == 0


@functools.lru_cache(maxsize=8)
def _derive(secret_keys: tuple[str, ...], salts: tuple[str, ...]) -> tuple[bytes, ...]:
    # PBKDF2 costs tens of milliseconds a key: derived once per set of settings.
    keys = []
    for secret_key in secret_keys:
        for salt in salts:
            kdf = PBKDF2HMAC(
                algorithm=hashes.SHA256(),
                length=32,
                salt=salt.encode("utf-8"),
                iterations=_ITERATIONS,
            )
            keys.append(base64.urlsafe_b64encode(kdf.derive(secret_key.encode("utf-8"))))
    return tuple(keys)


def fernet_keys() -> list[bytes]:
    """The Fernet keys, the one that encrypts first."""
    salts = tuple(settings.FIELD_ENCRYPTION_KEYS)
    if not salts:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS is not set, so stored secrets can be neither encrypted "
            "nor read. Set it to a random key of at least 32 characters (docs/security.md, "
            "'Secrets at rest')."
        )
    secret_keys = (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS)
    return list(_derive(secret_keys, salts))


def multi_fernet() -> MultiFernet:
    return MultiFernet([Fernet(key) for key in fernet_keys()])


class EncryptedFieldMixin(LibraryMixin):
    """The library's field behaviour, with the two changes the module docstring gives."""

    @property
    def keys(self) -> list[bytes]:
        return fernet_keys()

    @property
    def f(self) -> MultiFernet:
        return multi_fernet()

    def get_prep_value(self, value: Any) -> Any:
        if value == "":
            return ""
        return super().get_prep_value(value)

    def to_python(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if is_token(value):
            try:
                value = self.f.decrypt(value.encode("ascii")).decode("utf-8")
            except InvalidToken:
                raise UndecryptableSecret(
                    f"{self.model._meta.label}.{self.name} holds a value encrypted with a "
                    "key the settings do not have. Put the key it was written with back "
                    "in FIELD_ENCRYPTION_KEYS (after the current one), and if SECRET_KEY "
                    "changed since, the old SECRET_KEY in SECRET_KEY_FALLBACKS; then run "
                    "`manage.py secrets_rotate`."
                ) from None
        # Skip the library's to_python (it would decrypt again): the field's own.
        return super(LibraryMixin, self).to_python(value)

    def clean(self, value: Any, model_instance: models.Model | None) -> Any:
        # A model's attribute is plaintext: validated as it is. The library marks this
        # with a flag on the field, which every thread shares, so a thread loading a row
        # meanwhile would be handed the ciphertext.
        self.validate(value, model_instance)
        self.run_validators(value)
        return value


class EncryptedCharField(EncryptedFieldMixin, models.CharField):
    """A CharField stored encrypted (a text column: the ciphertext is longer)."""


class EncryptedURLField(EncryptedFieldMixin, models.URLField):
    """A URLField stored encrypted: forms and full_clean() still validate the URL."""


def encrypted_fields() -> Iterator[tuple[type[models.Model], list[str]]]:
    """Every installed model with encrypted fields, and their names."""
    for model in apps.get_models():
        names = [f.name for f in model._meta.concrete_fields if isinstance(f, LibraryMixin)]
        if names:
            yield model, names


@transaction.atomic
def secrets_rotate() -> dict[str, int]:
    """Re-encrypt every stored encrypted value with the first key; how many values were
    rewritten per model. A value no key opens stops it, and nothing is written."""
    rewritten: dict[str, int] = {}
    for model, names in encrypted_fields():
        manager = model._base_manager
        # Read (and so decrypt) everything first: an undecryptable value raises here.
        rows = list(manager.select_for_update().order_by("pk").values_list("pk", *names))
        count = 0
        for pk, *values in rows:
            changes = {name: value for name, value in zip(names, values, strict=True) if value}
            if changes:
                manager.filter(pk=pk).update(**changes)
                count += len(changes)
        rewritten[model._meta.label] = count
    return rewritten


@register(Tags.security, deploy=True)
def field_encryption_keys_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    keys = settings.FIELD_ENCRYPTION_KEYS
    hint = (
        "Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))' "
        "and keep it in the secret store beside SECRET_KEY (docs/security.md, 'Secrets at rest')."
    )
    if not keys:
        return [
            Error(
                "FIELD_ENCRYPTION_KEYS is not set: stored secrets (notification target "
                "URLs and signing secrets) cannot be encrypted.",
                hint=hint,
                id="encryption.E001",
            )
        ]
    first = keys[0]
    # Only the first key encrypts; the others are kept to read values not yet rotated.
    if (
        len(first) < KEY_MIN_CHARS
        or len(set(first)) < KEY_MIN_DISTINCT
        or first == settings.SECRET_KEY
    ):
        return [
            Error(
                f"The first FIELD_ENCRYPTION_KEYS key is weak: it needs at least "
                f"{KEY_MIN_CHARS} characters, {KEY_MIN_DISTINCT} of them different, "
                "and must not be SECRET_KEY.",
                hint=hint,
                id="encryption.E002",
            )
        ]
    return []
