"""The console's inbox (in-app notifications, the postmortems' Notifications page): a
notice stored for one person, worded once in their language, and marked read by them.

Postmortems writes review requests here itself; overdue action items are decided by the
notifications app (notifications/services/overdue.py), which calls `notification_add`.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext

from console.preferences.services import preference_get
from postmortems.models import Notification


def reader_language(user: User) -> str:
    """The language `user` reads the console in: their saved choice, else the default (a
    choice of "follow the browser" has no browser to follow here)."""
    pref = preference_get(user=user)
    return pref.language if pref is not None and pref.language else settings.LANGUAGE_CODE


def in_language_of(user: User, message: str, params: dict[str, object] | None = None) -> str:
    """`message` (a gettext_noop msgid) in the recipient's language: an in-app notice is
    stored, so it is worded once, for the one person who reads it."""
    with translation.override(reader_language(user)):
        text = gettext(message)
        return text % params if params else text


def notification_add(
    *,
    user: User,
    kind: str,
    message: str,
    link: str,
    key: str,
    params: dict[str, object] | None = None,
) -> bool:
    """One notice for `user`, once per `key` (a second call with the same key is left
    alone). Returns whether it is new."""
    _, created = Notification.objects.get_or_create(
        user=user,
        dedupe_key=key,
        defaults={
            "kind": kind,
            "message": in_language_of(user, message, params)[:500],
            "link": link,
            "created_at": timezone.now(),
        },
    )
    return created


@transaction.atomic
def notification_read(*, notification_id: int, actor: User) -> None:
    Notification.objects.filter(pk=notification_id, user=actor, read_at__isnull=True).update(
        read_at=timezone.now()
    )
