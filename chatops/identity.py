"""Who a chat user is in the console.

Rules, in order (the first that holds decides):
1. a row an admin linked (mapped_by "admin") is kept as it is: the admin's word wins, and
   an admin link to nobody keeps that chat user unmapped;
2. a row read less than CHAT_IDENTITY_RECHECK_SECONDS ago is kept;
3. otherwise the chat's profile is read (an outgoing call: never inside a transaction) and
   - its single sign-on subject equal to the subject of exactly one active console user's
     OidcIdentity → that user ("sso");
   - else its email, when the chat says it verified it, equal (ignoring case) to the
     email of exactly one active console user → that user ("email");
   - else nobody ("none"): they may read, not act.
A profile that cannot be read keeps the previous mapping (logged); a chat user never
mapped stays unmapped. A deactivated console user never acts (`acting_user`).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from chatops.messages import Profile
from chatops.models import ChatIdentity, MappedBy, Workspace
from chatops.surfaces import transport_for
from chatops.transport import TransportError
from console.oidc.models import OidcIdentity

log = logging.getLogger(__name__)
NAME_MAX = 200  # ChatIdentity.external_name
EMAIL_MAX = 254


def acting_user(identity: ChatIdentity | None) -> User | None:
    """The console user a chat user acts as: None when unmapped or deactivated."""
    if identity is None or identity.user is None or not identity.user.is_active:
        return None
    return identity.user


def profile_match(profile: Profile) -> tuple[User | None, str]:
    """The console user a chat profile names, and how (MappedBy)."""
    if profile.sso_subject:
        users = list(
            get_user_model()
            .objects.filter(
                is_active=True,
                pk__in=OidcIdentity.objects.filter(subject=profile.sso_subject).values("user_id"),
            )
            .distinct()[:2]
        )
        if len(users) == 1:
            return users[0], MappedBy.SSO
    email = (profile.email or "").strip()
    if email and profile.email_verified:
        users = list(get_user_model().objects.filter(is_active=True, email__iexact=email)[:2])
        if len(users) == 1:  # two accounts with one address: nobody can tell which
            return users[0], MappedBy.EMAIL
    return None, MappedBy.NONE


def _fresh(identity: ChatIdentity) -> bool:
    if identity.checked_at is None:
        return False
    age = timezone.now() - identity.checked_at
    return age < timedelta(seconds=settings.CHAT_IDENTITY_RECHECK_SECONDS)


def _save(workspace: Workspace, external_user: str, fields: dict[str, object]) -> ChatIdentity:
    """Create or update the row; two workers creating it at once both end with it."""
    for attempt in range(2):
        try:
            with transaction.atomic():
                identity, _ = ChatIdentity.objects.update_or_create(
                    workspace=workspace, external_user=external_user, defaults=fields
                )
            return identity
        except IntegrityError:
            if attempt:
                raise
    raise AssertionError("unreachable")


def _name(*names: str) -> str:
    return next((n for n in names if n), "")[:NAME_MAX]


def identity_resolve(
    *, workspace: Workspace, external_user: str, external_name: str = ""
) -> ChatIdentity:
    """The chat user's row, read from the chat again when it is due (see the module)."""
    identity = (
        ChatIdentity.objects.select_related("user")
        .filter(workspace=workspace, external_user=external_user)
        .first()
    )
    if identity is not None and (identity.mapped_by == MappedBy.ADMIN or _fresh(identity)):
        return identity
    try:
        profile = transport_for(workspace).profile(user=external_user)
    except TransportError as exc:
        if identity is not None:
            log.warning(
                "chatops: could not read %s's profile in %s (%s); keeping the mapping to %s",
                external_user, workspace, exc, identity.user or "nobody",
            )  # fmt: skip
            return identity
        log.warning(
            "chatops: could not read %s's profile in %s (%s); unmapped until it can be read",
            external_user, workspace, exc,
        )  # fmt: skip
        # checked_at stays empty: the next request reads the profile again.
        return _save(
            workspace,
            external_user,
            {"external_name": _name(external_name), "user": None, "mapped_by": MappedBy.NONE},
        )
    user, mapped_by = profile_match(profile)
    previous = identity.user if identity is not None else None
    if previous != user:
        log.info(
            "chatops: %s in %s now acts as %s (%s; was %s)",
            external_user, workspace, user or "nobody", mapped_by, previous or "nobody",
        )  # fmt: skip
    return _save(
        workspace,
        external_user,
        {
            "external_name": _name(profile.name, external_name),
            "email": (profile.email if profile.email_verified else "")[:EMAIL_MAX],
            "user": user,
            "mapped_by": mapped_by,
            "checked_at": timezone.now(),
        },
    )
