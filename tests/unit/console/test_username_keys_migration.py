"""Filling the username keys (console.usernames.keys.keys_fill, which console's initial
migration runs) on users made without them, as a database from before the keys held
them: users whose names already collide are both kept (one holds the key, the other is
named in a warning to rename), and the fill does not stop on them."""

import logging

import pytest
from django.contrib.auth.models import User

from console.usernames.keys import keys_fill
from console.usernames.models import UsernameKey

pytestmark = pytest.mark.django_db

WIDE = "\uff21dmin"  # full-width A
DOTTED = "ADM\u0130N"  # capital I with dot above


def test_existing_colliding_users_are_kept_and_reported(caplog):
    # bulk_create sends no signal: the rows have no key yet, in id order (oldest first).
    admin, wide, turkish, grace = User.objects.bulk_create(
        User(username=name, password="!") for name in ("admin", WIDE, DOTTED, "grace")
    )
    with caplog.at_level(logging.WARNING, logger="console.usernames.keys"):
        keys_fill(User, UsernameKey)
    keys = dict(UsernameKey.objects.values_list("user_id", "key"))
    assert keys[admin.pk] == "admin"  # the oldest account holds the key
    assert keys[grace.pk] == "grace"
    assert wide.pk not in keys
    assert turkish.pk not in keys
    assert User.objects.filter(username__in=[WIDE, DOTTED]).count() == 2
    (line,) = [r.getMessage() for r in caplog.records if "collide" in r.getMessage()]
    assert f"{WIDE!r} collides with 'admin'" in line
    assert f"{DOTTED!r} collides with 'admin'" in line
