"""Service accounts: the users the console acts as by itself, never a person.

The guard's (GUARD_USERNAME, default `console-guard`) is the first; a feature that needs
its own (a pager, a chat bot) registers one with `service_account_register` when its
module is imported (its app's `ready()`), so the next `migrate` makes it. Each one:

- exists from the migrations on (console's initial migration and, after every migrate
  and test flush, the post_migrate sync): code that acts as it only looks it up
  (`service_account_user`) and never creates it, so nobody can sign in first under its
  name and become it;
- has no usable password (the sign-in backends refuse it before any password is
  checked, console.oidc.backends.PasswordLoginPolicy), no single sign-on identity and no API
  token (`is_service_account` is what the token services ask);
- has exactly the permissions listed here, no role, no admin flags;
- has a reserved name: console.usernames.keys refuses it and its look-alikes to sign-ins
  and the admin's forms, even while the account is missing.

An account a person already holds under a reserved name (made by a sign-in before this
release) is renamed aside, `<name>-taken-<pk>`, with a warning in the log: the person
keeps their account, role and history under the new name.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX, make_password
from django.contrib.auth.models import Permission
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.oidc.models import OidcIdentity
from console.usernames.keys import username_key

log = logging.getLogger(__name__)
USERNAME_MAX = 150


@dataclass(frozen=True)
class ServiceAccount:
    key: str  # the registry's key
    name: Callable[[], str]  # reads its setting, so an operator can rename it
    default: str
    purpose: str | Promise  # shown in refusals: "reserved for ... (purpose)"
    permissions: tuple[str, ...]  # "app_label.codename", as in console/roles.py

    @property
    def username(self) -> str:
        return str(self.name() or self.default)


class ServiceAccountMissing(DomainError):
    code = "service_account_missing"


_REGISTRY: dict[str, ServiceAccount] = {}


def service_account_register(account: ServiceAccount) -> ServiceAccount:
    _REGISTRY[account.key] = account
    return account


# Requests runs and nothing else: never approves, so an undo that needs approval waits
# for a commander (actions/guard/services.py).
GUARD = service_account_register(
    ServiceAccount(
        key="guard",
        name=lambda: settings.GUARD_USERNAME,
        default="console-guard",
        purpose=gettext_lazy("the guard's automatic undos"),
        permissions=("actions.request_actionrun",),
    )
)


def service_accounts() -> list[ServiceAccount]:
    return list(_REGISTRY.values())


def is_service_account(user: Any) -> bool:
    """True for the (exactly named) user of a registered service account."""
    get_username = getattr(user, "get_username", None)
    if get_username is None:
        return False
    return is_service_account_name(str(get_username() or ""))


def is_service_account_name(username: str) -> bool:
    return bool(username) and username in {a.username for a in service_accounts()}


def reserved_for(key: str) -> ServiceAccount | None:
    """The service account whose name has this username key (console.usernames.keys)."""
    return next((a for a in service_accounts() if username_key(a.username) == key), None)


def service_account_user(account: ServiceAccount) -> Any:
    """The account's user, looked up, never created."""
    user = get_user_model()._default_manager.filter(username=account.username).first()
    if user is None:
        raise ServiceAccountMissing(
            gettext_noop(
                "The service account %(username)s is missing; run `manage.py migrate` to "
                "create it (it is never made on the fly, so nobody can take its name)."
            ),
            params={"username": repr(account.username)},
        )
    return user


# --- kept by the migrations -------------------------------------------------------------
def _person_holds(user: Any, identity_model: Any) -> bool:
    password = user.password or ""
    return bool(
        user.is_superuser
        or user.is_staff
        or (password and not password.startswith(UNUSABLE_PASSWORD_PREFIX))
        or user.groups.exists()
        or identity_model.objects.filter(user_id=user.pk).exists()
    )


def _put_aside(user: Any, username: str, why: str) -> None:
    aside = f"{user.username}-taken-{user.pk}"[:USERNAME_MAX]
    log.warning(
        "The account %r (id %s) %s the name reserved for the service account %r; "
        "renamed to %r, its identity and roles kept.",
        user.username,
        user.pk,
        why,
        username,
        aside,
    )
    user.username = aside
    user.save(update_fields=["username"])


def _claim(account: ServiceAccount, user_model: Any, identity_model: Any) -> Any:
    """The account's user, made now if needed, with every holder of its name put aside."""
    manager, username = user_model._default_manager, account.username
    user = manager.filter(username=username).first()
    if user is not None and not _person_holds(user, identity_model):
        return user  # made by an earlier migrate (or lazily, by the guard of old)
    if user is not None:
        _put_aside(user, username, "holds")
    key = username_key(username)
    for look_alike in manager.exclude(username=username).only("pk", "username"):
        if username_key(look_alike.username) == key:
            _put_aside(look_alike, username, "looks the same as")
    user = manager.create(username=username, password=make_password(None), is_active=True)
    log.info("Created the service account %r.", username)
    return user


def service_accounts_ensure(
    *, user_model: Any = None, permission_model: Any = None, identity_model: Any = None
) -> None:
    """Make every registered account and set it to what its entry says. Idempotent: run
    by console's initial migration with its historical models and after every migrate (console.apps)
    with the real ones. A permission whose app has not made it yet is granted at the
    post_migrate that follows."""
    user_model = user_model or get_user_model()
    permission_model = permission_model or Permission
    identity_model = identity_model or OidcIdentity
    for account in service_accounts():
        user = _claim(account, user_model, identity_model)
        changed = []
        if (user.password or "").startswith(UNUSABLE_PASSWORD_PREFIX) is False:
            user.password = make_password(None)
            changed.append("password")
        for flag in ("is_superuser", "is_staff"):
            if getattr(user, flag):
                setattr(user, flag, False)
                changed.append(flag)
        if not user.is_active:
            user.is_active = True  # an inactive user holds no permission
            changed.append("is_active")
        if changed:
            user.save(update_fields=changed)
        identity_model.objects.filter(user_id=user.pk).delete()
        if user.groups.exists():
            user.groups.clear()
        wanted = [p.split(".", 1) for p in account.permissions]
        found = [
            permission_model.objects.filter(content_type__app_label=app, codename=code).first()
            for app, code in wanted
        ]
        user.user_permissions.set([p for p in found if p is not None])
