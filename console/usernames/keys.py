"""Usernames that only look different are the same name here (issue 23, finding 6).

`username_key` is what two names are compared by: NFKC (full-width and other
compatibility forms become plain letters), case-folded, with combining marks and
invisible characters dropped and the dotless i (U+0131) folded into i (so `ADM` +
U+0130 + `N`, whose case-fold is i + a combining dot, and `adm` + U+0131 + `n` meet
`admin`). Accents therefore do not tell two names apart either: `josé` and `jose` are
one name. The keys are unique in the
database (console.usernames.models.UsernameKey), kept by signals on every save that
changes a username, so a shell or a script cannot add a look-alike either.

`username_check` is what the services and forms that name an account call first: it
refuses invisible or formatting characters, a mix of Latin, Greek and Cyrillic letters,
the names reserved for service accounts and a name whose key another account holds,
each with a message naming the problem.
"""

import logging
import unicodedata
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError
from django.db.models.signals import post_save, pre_save
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.usernames.models import UsernameKey

log = logging.getLogger(__name__)
KEY_MAX = 600  # UsernameKey.key; NFKC can lengthen a name (ligatures, ﷺ)

# Categories of characters that show nothing or reorder text: format (zero-width
# space, joiners, bidi overrides, soft hyphen), control, surrogate, private use,
# unassigned, and separators (Django's validator allows no space anyway).
_INVISIBLE_CATEGORIES = {"Cf", "Cc", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"}
# Default-ignorable code points that are letters or marks to Unicode, so pass Django's
# \w: the Hangul fillers and the Khmer inherent vowels, variation selectors, the
# combining grapheme joiner.
_INVISIBLE_LETTERS = {0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0x034F}
_INVISIBLE_RANGES = ((0x180B, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
# Scripts whose letters look like each other's (Cyrillic a, Greek o, Cyrillic EN and
# Latin H): one name uses one.
_CONFUSABLE_SCRIPTS = {
    "LATIN": gettext_lazy("Latin"),
    "GREEK": gettext_lazy("Greek"),
    "CYRILLIC": gettext_lazy("Cyrillic"),
}
_FOLD = str.maketrans({"\u0131": "i"})  # Turkish dotless i: no case-fold to i


class UsernameRefused(DomainError):
    code = "invalid"
    holder = ""  # with code "username_taken": the account whose key the name has


class UsernameTaken(IntegrityError):
    """Raised by the save of a user whose name's key another account holds."""


def _invisible(char: str) -> bool:
    point = ord(char)
    return char != " " and (  # a plain space shows: Django's validator names it
        unicodedata.category(char) in _INVISIBLE_CATEGORIES
        or point in _INVISIBLE_LETTERS
        or any(low <= point <= high for low, high in _INVISIBLE_RANGES)
    )


def username_key(username: str) -> str:
    """The name two usernames are compared by (see the module's docstring)."""
    text = unicodedata.normalize("NFKC", username).casefold()
    text = unicodedata.normalize("NFKD", text)
    kept = (c for c in text if not unicodedata.combining(c) and not _invisible(c))
    return unicodedata.normalize("NFKC", "".join(kept).translate(_FOLD)).casefold()


def invisible_characters(username: str) -> list[str]:
    """The invisible or formatting characters in a name, as U+XXXX NAME."""
    return [f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in username if _invisible(c)]


def _scripts(username: str) -> list[str]:
    """The confusable scripts (Unicode names' first word) the name's letters are in."""
    found = set()
    for char in unicodedata.normalize("NFKC", username):
        if char.isalpha():
            script = unicodedata.name(char, "").split(" ", 1)[0]
            if script in _CONFUSABLE_SCRIPTS:
                found.add(script)
    return sorted(found)


def key_holder(key: str, *, user_pk: int | None = None) -> str | None:
    """The username of the other account whose name has this key, if any."""
    rows = UsernameKey.objects.filter(key=key)
    if user_pk is not None:
        rows = rows.exclude(user_id=user_pk)
    return rows.values_list("user__username", flat=True).first()


def username_check(username: str, *, user_pk: int | None = None) -> None:
    """Refuse a name for a new account (user_pk None) or for a rename of user_pk."""
    # cycle: service_accounts imports username_key from here to compare reserved names
    from console.service_accounts import reserved_for

    shown = repr(username[:60])
    if hidden := invisible_characters(username):
        raise UsernameRefused(
            gettext_noop(
                "The username %(username)s contains invisible or formatting characters "
                "(%(characters)s); use visible letters, digits and @.+-_ only."
            ),
            params={"username": shown, "characters": ", ".join(hidden)},
        )
    if len(scripts := _scripts(username)) > 1:
        names = [_CONFUSABLE_SCRIPTS[s] for s in scripts]  # lazy: English in str()
        raise UsernameRefused(
            gettext_noop(
                "The username %(username)s mixes letters of several alphabets that look "
                "alike (%(scripts)s); write it in one."
            ),
            params={
                "username": shown,
                "scripts": format_lazy(", ".join(["{}"] * len(names)), *names),
            },
        )
    key = username_key(username)
    if not key or len(key) > KEY_MAX:
        raise UsernameRefused(
            gettext_noop("The username %(username)s has no usable letters or is too long."),
            params={"username": shown},
        )
    if (account := reserved_for(key)) is not None and account.username != _current(user_pk):
        raise UsernameRefused(
            gettext_noop(
                "The username %(username)s is reserved for the console's service account "
                "%(account)s (%(purpose)s); choose another."
            ),
            code="username_reserved",
            params={
                "username": shown,
                "account": repr(account.username),
                "purpose": account.purpose,
            },
        )
    if (holder := key_holder(key, user_pk=user_pk)) is not None:
        refusal = UsernameRefused(
            gettext_noop(
                "The username %(username)s looks the same as the existing account "
                "%(existing)s once case, accents and look-alike characters are set aside; "
                "choose another."
            ),
            code="username_taken",
            params={"username": shown, "existing": repr(holder)},
        )
        refusal.holder = holder
        raise refusal


def _current(user_pk: int | None) -> str | None:
    if user_pk is None:
        return None
    user_model = get_user_model()
    return (
        user_model._default_manager.filter(pk=user_pk)
        .values_list(user_model.USERNAME_FIELD, flat=True)
        .first()
    )


# --- the keys follow every save -------------------------------------------------------------
def _renames(update_fields: Any) -> bool:
    return update_fields is None or "username" in update_fields


def _before_save(sender: Any, instance: Any, raw: bool, update_fields: Any, **kwargs: Any) -> None:
    """Refuse a new name whose key another account holds, before the row is written (so
    an autocommit save leaves no account behind). The unique key is the last word: two
    saves at once both pass here and the second fails on the key's insert."""
    instance._username_renamed = False
    if not _renames(update_fields):
        return
    username = instance.get_username()
    if instance.pk is not None and _current(instance.pk) == username:
        return  # not a rename: a collision kept when the keys were filled stays as it is
    instance._username_renamed = True
    if (holder := key_holder(username_key(username), user_pk=instance.pk)) is not None:
        raise UsernameTaken(
            f"The username {username[:60]!r} looks the same as the existing account "
            f"{holder!r}; choose another."
        )


def _after_save(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if getattr(instance, "_username_renamed", False):
        UsernameKey.objects.update_or_create(
            user_id=instance.pk, defaults={"key": username_key(instance.get_username())}
        )


def connect() -> None:
    user_model = get_user_model()
    pre_save.connect(_before_save, sender=user_model, dispatch_uid="console.username_key_check")
    post_save.connect(_after_save, sender=user_model, dispatch_uid="console.username_key_keep")


def keys_fill(user_model: Any, key_model: Any) -> list[str]:
    """Give every user without a key theirs, oldest account first; a user whose key is
    already held keeps their account without one. Returns a line per collision. Used by
    console's initial migration with its historical models."""
    held = dict(key_model.objects.values_list("key", "user_id"))
    names = dict(user_model._default_manager.values_list("pk", "username"))
    rows, collisions = [], []
    for pk, username in sorted(names.items()):
        key = username_key(username)[:KEY_MAX]
        if key in held:
            if held[key] != pk:
                collisions.append(f"{username!r} collides with {names.get(held[key])!r}")
            continue
        held[key] = pk
        rows.append(key_model(user_id=pk, key=key))
    key_model.objects.bulk_create(rows, batch_size=1000)
    if collisions:
        log.warning(
            "Usernames that look the same once normalised (both accounts kept; rename one of "
            "each pair, the first has no username key until then): %s",
            "; ".join(collisions),
        )
    return collisions
