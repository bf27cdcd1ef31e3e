"""Sign-in through the identity provider: the console account behind a provider account,
and its role, read again from the groups claim at every sign-in.

A provider account (issuer + `sub`) is linked to the console user made at its first
sign-in, named by OIDC_USERNAME_CLAIM. An existing console account of that name is never
taken over: a local or break-glass account could otherwise be claimed by whoever the
provider calls by the same name. Nor is a look-alike of one made (a full-width or
dotted-capital-I `admin` beside `admin`), a name with invisible characters, or a
service account's reserved name (console/usernames/keys.py, console/service_accounts.py).
The role is the highest one whose OIDC_<ROLE>_GROUPS meets the groups claim; with none,
the sign-in is refused and a linked user loses the role they had (a person removed from
the group at the provider loses it here at their next sign-in). The change is written
to the audit log with the request's address.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy, gettext_noop

from console.audit import reasons
from console.audit.models import AuditKind, AuditMethod
from console.audit.reasons import audit_reason
from console.audit.services import audit_record, role_change_recorded_by_caller, roles_of
from console.errors import Translatable
from console.oidc.models import OidcIdentity
from console.roles import ADMIN, ROLE_ORDER
from console.service_accounts import is_service_account
from console.usernames.keys import UsernameRefused, username_check

USERNAME_MAX = 150
# (User field, standard claim, field length)
PROFILE_CLAIMS = (
    ("email", "email", 254),
    ("first_name", "given_name", 150),
    ("last_name", "family_name", 150),
)


class SignInRefused(Translatable, Exception):
    """A sign-in the console refuses, with the reason shown to the person (translated)
    and audited (str(): English)."""

    def __init__(self, message: str, *, params: dict[str, object] | None = None) -> None:
        super().__init__(self._keep(message, params))


def groups_claimed(claims: dict[str, Any]) -> list[str]:
    """The groups claim as a list of names (a provider may send one name as a string)."""
    value = claims.get(settings.OIDC_GROUPS_CLAIM)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(group) for group in value]
    return []


def role_for_groups(groups: list[str]) -> str | None:
    """The highest role any of `groups` gives (settings.OIDC_ROLE_GROUPS), or None."""
    held = set(groups)
    for role in reversed(ROLE_ORDER):
        if held & set(settings.OIDC_ROLE_GROUPS.get(role, [])):
            return role
    return None


def _no_role(groups: list[str]) -> SignInRefused:
    claimed = ", ".join(groups) if groups else gettext_lazy("none")
    return SignInRefused(
        gettext_noop(
            "Your identity provider account is in none of the groups that give a console role "
            "(its %(claim)s claim: %(claimed)s). Ask a console admin to add you to one."
        ),
        params={"claim": repr(settings.OIDC_GROUPS_CLAIM), "claimed": claimed},
    )


def _username(claims: dict[str, Any]) -> str:
    claim = settings.OIDC_USERNAME_CLAIM
    username = str(claims.get(claim) or "").strip()
    if not username:
        raise SignInRefused(
            gettext_noop(
                "The identity provider sent no %(claim)s claim to name your console account "
                "(an admin can choose another with OIDC_USERNAME_CLAIM)."
            ),
            params={"claim": repr(claim)},
        )
    try:
        username_check(username)  # invisible characters, look-alikes, reserved names
    except UsernameRefused as exc:
        if exc.code == "username_taken" and exc.holder.casefold() == username.casefold():
            raise _taken(exc.holder) from exc
        raise SignInRefused(exc.message, params=dict(exc.params)) from exc
    try:
        if len(username) > USERNAME_MAX:
            raise ValidationError("too long")
        UnicodeUsernameValidator()(username)
    except ValidationError as exc:
        raise SignInRefused(
            gettext_noop(
                "The %(claim)s claim %(username)s cannot be a console username (letters, "
                "digits and @.+-_ only, at most %(max)s)."
            ),
            params={"claim": repr(claim), "username": repr(username[:60]), "max": USERNAME_MAX},
        ) from exc
    return username


def _profile(claims: dict[str, Any]) -> dict[str, str]:
    """The profile fields the provider sent (absent ones are left as they are)."""
    return {
        field: claims[claim][:limit]
        for field, claim, limit in PROFILE_CLAIMS
        if isinstance(claims.get(claim), str)
    }


def _taken(username: str) -> SignInRefused:
    return SignInRefused(
        gettext_noop(
            "The console already has an account named %(username)s that does not sign in "
            "with single sign-on; an admin must rename or deactivate it first."
        ),
        params={"username": repr(username)},
    )


def _user_create(*, issuer: str, subject: str, claims: dict[str, Any]) -> User:
    username = _username(claims)
    existing = User.objects.filter(username__iexact=username).first()
    if existing is not None:  # an account the username keys do not cover (bulk-made)
        raise _taken(existing.username)
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, **_profile(claims))  # no password
            OidcIdentity.objects.create(user=user, issuer=issuer, subject=subject)
    except IntegrityError as exc:  # the same account (or a look-alike) signing in at once
        raise SignInRefused(
            gettext_noop("Your first sign-in is already under way; try again.")
        ) from exc
    return user


def _profile_update(user: User, claims: dict[str, Any]) -> None:
    wanted = _profile(claims)
    changed = [field for field, value in wanted.items() if getattr(user, field) != value]
    for field in changed:
        setattr(user, field, wanted[field])
    if changed:
        user.save(update_fields=changed)


def _role_set(*, user: User, role: str | None, groups: list[str], request: HttpRequest) -> None:
    before = roles_of([user.pk])[user.pk]
    after = [role] if role else []
    if before != after:
        role_groups = {g.name: g for g in Group.objects.filter(name__in=ROLE_ORDER)}
        with role_change_recorded_by_caller():  # one row for the change, with the request
            user.groups.remove(*(g for name, g in role_groups.items() if name not in after))
            if role:
                user.groups.add(role_groups[role])
        audit_record(
            kind=AuditKind.ROLE_CHANGED,
            method=AuditMethod.OIDC,
            request=request,
            user=user,
            old=before,
            new=after,
            reason=audit_reason(reasons.GROUPS, groups=", ".join(groups))
            if groups
            else audit_reason(reasons.GROUPS_NONE),
        )
    is_staff = role == ADMIN  # the Django admin is for the admin role
    if user.is_staff != is_staff:
        user.is_staff = is_staff
        user.save(update_fields=["is_staff"])


def _sync(
    *, issuer: str, claims: dict[str, Any], request: HttpRequest
) -> tuple[User | None, SignInRefused | None]:
    subject = str(claims.get("sub") or "")
    if not subject:
        raise SignInRefused(
            gettext_noop("The identity provider sent no subject (sub) for your account.")
        )
    groups = groups_claimed(claims)
    role = role_for_groups(groups)
    identity = (
        OidcIdentity.objects.select_for_update()
        .filter(issuer=issuer, subject=subject)
        .select_related("user")
        .first()
    )
    if identity is None:
        if role is None:
            return None, _no_role(groups)  # nobody is made for a sign-in without a role
        user = _user_create(issuer=issuer, subject=subject, claims=claims)
    else:
        user = identity.user
        if is_service_account(user):  # linked by hand: a service account has no identity
            raise SignInRefused(
                gettext_noop(
                    "The console account %(username)s is a service account; nobody signs in as it."
                ),
                params={"username": repr(user.username)},
            )
        if not user.is_active:
            raise SignInRefused(
                gettext_noop(
                    "The console account %(username)s is deactivated; ask a console admin."
                ),
                params={"username": repr(user.username)},
            )
        _profile_update(user, claims)
    _role_set(user=user, role=role, groups=groups, request=request)
    return user, None if role else _no_role(groups)


def oidc_account_sync(*, issuer: str, claims: dict[str, Any], request: HttpRequest) -> User:
    """The console user for these (validated) claims, made at the first sign-in, with the
    role their groups give now. SignInRefused when they may not sign in; a demotion that
    comes with the refusal is kept (committed before refusing)."""
    with transaction.atomic():
        user, refusal = _sync(issuer=issuer, claims=claims, request=request)
    if refusal is not None:
        raise refusal
    assert user is not None  # no user comes only with a refusal
    return user
