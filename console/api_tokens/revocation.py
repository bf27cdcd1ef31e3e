"""Account changes that end every API token of a user, from Django's model signals, so
every path is covered by one mechanism (the admin, the changepassword command, a shell,
single sign-on's role sync):

- the password changes: set_password (or set_unusable_password, or a new hash) saved.
  A hash upgraded at login (Django rehashes the same password when its hasher changes)
  is not a change: Django saves it with update_fields=["password"] and no new password;
- the account is deactivated;
- the user's highest console role drops (to a lower one or to none): a group removed or
  cleared either way round, a role group deleted, the superuser flag taken away. It is
  judged when the change commits, so a role swapped for a higher one (the admin's form
  and single sign-on remove the old group, then add the new) keeps the tokens.

A queryset .update() sends no signal; the API still refuses an inactive user's tokens.
"""

from typing import Any

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.models.signals import m2m_changed, post_save, pre_delete, pre_save

from console.api_tokens.models import ApiToken
from console.api_tokens.services import api_tokens_revoke_all
from console.audit import reasons
from console.audit.models import AuditMethod
from console.audit.reasons import audit_reason
from console.audit.services import group_change_user_ids, roles_of
from console.roles import ADMIN, ROLE_ORDER

# Audit reasons (English; the /audit/ page words them, console/audit/reasons.py).
PASSWORD_CHANGED = audit_reason(reasons.PASSWORD_CHANGED)
DEACTIVATED = audit_reason(reasons.DEACTIVATED)
NO_ROLE = -1
WATCHED = {"password", "is_active", "is_superuser"}


# --- the password and deactivation ---------------------------------------------------------
def _saves(update_fields: Any, field: str) -> bool:
    return update_fields is None or field in update_fields


def _password_changed(user: User, old_hash: str, update_fields: Any) -> bool:
    if not _saves(update_fields, "password") or user.password == old_hash:
        return False
    # Django's rehash at login: the same password, a new hash, saved alone. set_password
    # keeps the new password in _password until the save (Django's own test for "the
    # password changed", which runs its validators' password_changed hooks).
    upgraded = getattr(user, "_password", None) is None and set(update_fields or ()) == {"password"}
    return not upgraded


def _before_user_save(sender: Any, instance: User, update_fields: Any = None, **kw: Any) -> None:
    if instance.pk is None or kw.get("raw"):
        return
    if update_fields is not None and not WATCHED & set(update_fields):
        return  # e.g. last_login at every sign-in: nothing to compare, no query
    old = (
        User.objects.filter(pk=instance.pk).values("password", "is_active", "is_superuser").first()
    )
    if old is None:
        return
    reasons = []
    if _password_changed(instance, old["password"], update_fields):
        reasons.append(PASSWORD_CHANGED)
    if old["is_active"] and not instance.is_active and _saves(update_fields, "is_active"):
        reasons.append(DEACTIVATED)
    instance._api_token_revoke = " ".join(reasons)  # type: ignore[attr-defined]
    superuser_dropped = (
        old["is_superuser"] and not instance.is_superuser and _saves(update_fields, "is_superuser")
    )
    instance._api_token_rank_before = (  # type: ignore[attr-defined]
        ROLE_ORDER.index(ADMIN) if superuser_dropped else None
    )


def _after_user_save(sender: Any, instance: User, created: bool, **kw: Any) -> None:
    reason = getattr(instance, "_api_token_revoke", "")
    rank_before = getattr(instance, "_api_token_rank_before", None)
    instance._api_token_revoke = ""  # type: ignore[attr-defined]
    instance._api_token_rank_before = None  # type: ignore[attr-defined]
    if reason:
        api_tokens_revoke_all(user_id=instance.pk, method=AuditMethod.ACCOUNT, reason=reason)
    if rank_before is not None:
        _check_at_commit({instance.pk: rank_before})


# --- the role -------------------------------------------------------------------------------
def _ranks(user_ids: list[int]) -> dict[int, int]:
    """Each user's highest console role, as its place in ROLE_ORDER (superusers: admin)."""
    held = roles_of(user_ids)
    superusers = set(
        User.objects.filter(pk__in=user_ids, is_superuser=True).values_list("pk", flat=True)
    )
    return {
        uid: ROLE_ORDER.index(ADMIN)
        if uid in superusers
        else max((ROLE_ORDER.index(r) for r in names), default=NO_ROLE)
        for uid, names in held.items()
    }


def _name(rank: int) -> str:
    return ROLE_ORDER[rank] if rank != NO_ROLE else "none"


def _check_at_commit(before: dict[int, int]) -> None:
    """When the change commits, end the tokens of each user whose role is now lower."""
    wanted = {uid: rank for uid, rank in before.items() if rank != NO_ROLE}
    if not wanted or not ApiToken.objects.filter(user_id__in=wanted).exists():
        return

    def check() -> None:
        after = _ranks(list(wanted))
        for uid, rank in sorted(wanted.items()):
            if after.get(uid, NO_ROLE) < rank:
                reason = audit_reason(
                    reasons.ROLE_LOWERED,
                    role_before=_name(rank),
                    role_after=_name(after.get(uid, NO_ROLE)),
                )
                api_tokens_revoke_all(user_id=uid, method=AuditMethod.GROUPS, reason=reason)

    transaction.on_commit(check)


def _on_groups_changed(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: set[int] | None, **kw: Any
) -> None:
    # Only a removal can lower a role; its "before" is read before the rows go.
    if action in ("pre_remove", "pre_clear"):
        _check_at_commit(_ranks(group_change_user_ids(instance, reverse, pk_set)))


def _before_group_delete(sender: Any, instance: Group, **kw: Any) -> None:
    if instance.name in ROLE_ORDER:
        _check_at_commit(_ranks(list(instance.user_set.values_list("pk", flat=True))))


def connect() -> None:
    """Called once from ConsoleConfig.ready."""
    pre_save.connect(_before_user_save, sender=User, dispatch_uid="console.api_tokens.pre_save")
    post_save.connect(_after_user_save, sender=User, dispatch_uid="console.api_tokens.post_save")
    m2m_changed.connect(
        _on_groups_changed,
        sender=User.groups.through,
        dispatch_uid="console.api_tokens.groups",
    )
    pre_delete.connect(
        _before_group_delete, sender=Group, dispatch_uid="console.api_tokens.services.group_delete"
    )
