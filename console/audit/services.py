"""The sign-in audit log: one row per login, logout, failed login and role change, with
the client's address (the lockout's TRUSTED_PROXY_COUNT logic) and user agent.

Rows come from Django's own signals, so every way in is covered by one path: the login
page, the admin login, the API token endpoint, single sign-on, `client.login()`.
Whoever refuses a login notes why on the request (`note_failure`) before Django sends
`user_login_failed`; the receiver here writes that reason. Role changes are written
from group-membership changes (admin, shell) or, for sign-ins, by console/oidc/services.py
with the request, which is why it can switch the generic recording off for a moment.
"""

import ipaddress
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.contrib.auth import user_logged_in, user_logged_out, user_login_failed
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db.models import QuerySet
from django.db.models.signals import m2m_changed
from django.http import HttpRequest

from console.audit import reasons
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from console.audit.reasons import audit_reason
from console.login_lockout import API_PREFIX, client_ip
from console.roles import ROLE_ORDER

USER_AGENT_MAX = AuditEvent._meta.get_field("user_agent").max_length or 512
REASON_MAX = AuditEvent._meta.get_field("reason").max_length or 500
USERNAME_MAX = 150
# English, from templates the /audit/ page words in the reader's language (reasons.py).
WRONG_PASSWORD = audit_reason(reasons.WRONG_PASSWORD)
LOCKED_OUT = audit_reason(reasons.LOCKED_OUT)
OIDC_BACKEND = "console.oidc.backends.OIDCBackend"

# Set while a caller records a role change itself (with the request it came in on).
_ROLES_RECORDED_BY_CALLER: ContextVar[bool] = ContextVar("roles_recorded_by_caller", default=False)


# --- writes -----------------------------------------------------------------------------
def _ip(request: HttpRequest | None) -> str | None:
    raw = client_ip(request) if request is not None else None
    try:
        return str(ipaddress.ip_address((raw or "").strip()))
    except ValueError:
        return None  # no socket address (code, tests), or a header that is not an address


def _user_agent(request: HttpRequest | None) -> str:
    if request is None:
        return ""
    return str(request.META.get("HTTP_USER_AGENT", ""))[:USER_AGENT_MAX]


def audit_record(
    *,
    kind: str,
    method: str,
    request: HttpRequest | None = None,
    user: AbstractBaseUser | None = None,
    username: str = "",
    reason: str = "",
    old: Any = None,
    new: Any = None,
) -> AuditEvent:
    """Append one audit row; the address and user agent come from `request` when given."""
    return AuditEvent.objects.create(
        kind=kind,
        method=method,
        user_id=user.pk if user is not None else None,
        username=(username or (user.get_username() if user is not None else ""))[:USERNAME_MAX],
        ip=_ip(request),
        user_agent=_user_agent(request),
        reason=reason[:REASON_MAX],
        old=old,
        new=new,
    )


def note_failure(
    request: HttpRequest | None,
    *,
    method: str,
    reason: str,
    username: str = "",
    shown: str = "",
) -> None:
    """Say why a login is being refused, for the row `user_login_failed` will write
    (`reason`, English) and for the message the sign-in page shows (`shown`, in the
    page's language; `reason` when not given)."""
    if request is not None:
        request.console_auth_failure = {  # type: ignore[attr-defined]
            "method": method,
            "reason": reason,
            "shown": shown or reason,
            "username": username,
        }


def failure_noted(request: HttpRequest) -> dict[str, str] | None:
    return getattr(request, "console_auth_failure", None)


@contextmanager
def role_change_recorded_by_caller() -> Iterator[None]:
    """Group changes inside this block are not recorded from the signal: the caller
    writes one row for the whole change, with its request."""
    token = _ROLES_RECORDED_BY_CALLER.set(True)
    try:
        yield
    finally:
        _ROLES_RECORDED_BY_CALLER.reset(token)


def roles_of(user_ids: Iterable[int]) -> dict[int, list[str]]:
    """The role groups each user is in, in ROLE_ORDER (one query)."""
    held: dict[int, set[str]] = {uid: set() for uid in user_ids}
    memberships = User.groups.through.objects.filter(
        user_id__in=list(held), group__name__in=ROLE_ORDER
    ).values_list("user_id", "group__name")
    for uid, name in memberships:
        held[uid].add(name)
    return {uid: [r for r in ROLE_ORDER if r in names] for uid, names in held.items()}


# --- receivers --------------------------------------------------------------------------
def _path(request: HttpRequest | None) -> str:
    return getattr(request, "path", "") or ""


def _login_method(request: HttpRequest | None, user: Any) -> str:
    if _path(request).startswith(API_PREFIX):
        return AuditMethod.API_TOKEN
    backend = getattr(user, "backend", "")
    if backend == OIDC_BACKEND:
        return AuditMethod.OIDC
    if not _path(request):
        return AuditMethod.SESSION  # force_login and other logins made by code
    return AuditMethod.PASSWORD


def _on_logged_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    audit_record(
        kind=AuditKind.LOGIN, method=_login_method(request, user), request=request, user=user
    )


def _on_logged_out(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if user is None or isinstance(user, AnonymousUser):
        return  # logging out without a session is not an event
    audit_record(kind=AuditKind.LOGOUT, method=AuditMethod.SESSION, request=request, user=user)


def _on_login_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    noted = failure_noted(request) if request is not None else None
    username = str(credentials.get("username") or "")
    if noted:
        method, reason = noted["method"], noted["reason"]
        username = noted["username"] or username
    elif getattr(request, "axes_locked_out", False):
        method, reason = _password_method(request), LOCKED_OUT
    else:
        method, reason = _password_method(request), WRONG_PASSWORD
    audit_record(
        kind=AuditKind.LOGIN_FAILED,
        method=method,
        request=request,
        username=username,
        reason=reason,
    )


def _password_method(request: HttpRequest | None) -> str:
    return AuditMethod.API_TOKEN if _path(request).startswith(API_PREFIX) else AuditMethod.PASSWORD


def group_change_user_ids(instance: Any, reverse: bool, pk_set: set[int] | None) -> list[int]:
    """The users whose groups an m2m_changed on User.groups changed (either side)."""
    if not reverse:  # user.groups.add(...): the instance is the user
        return [instance.pk]
    if pk_set is not None:  # group.user_set.add(...): the users are the pks
        return sorted(pk_set)
    return list(instance.user_set.values_list("pk", flat=True))  # group.user_set.clear()


def _on_groups_changed(
    sender: Any,
    instance: Any,
    action: str,
    reverse: bool,
    pk_set: set[int] | None,
    **kwargs: Any,
) -> None:
    """A role is a group: record what each changed user's roles were and became."""
    if _ROLES_RECORDED_BY_CALLER.get():
        return
    if action.startswith("pre_"):
        instance._audit_roles_before = roles_of(group_change_user_ids(instance, reverse, pk_set))
        return
    before: dict[int, list[str]] = getattr(instance, "_audit_roles_before", {})
    instance._audit_roles_before = {}
    if not before:
        return
    after = roles_of(before)
    changed = {uid for uid in before if before[uid] != after[uid]}
    if not changed:
        return
    names = dict(User.objects.filter(pk__in=changed).values_list("pk", "username"))
    for uid in sorted(changed):
        AuditEvent.objects.create(
            kind=AuditKind.ROLE_CHANGED,
            method=AuditMethod.GROUPS,
            user_id=uid,
            username=names.get(uid, ""),
            old=before[uid],
            new=after[uid],
        )


def connect() -> None:
    """Called once from ConsoleConfig.ready."""
    user_logged_in.connect(_on_logged_in, dispatch_uid="console.audit.services.logged_in")
    user_logged_out.connect(_on_logged_out, dispatch_uid="console.audit.services.logged_out")
    user_login_failed.connect(_on_login_failed, dispatch_uid="console.audit.services.login_failed")
    m2m_changed.connect(
        _on_groups_changed, sender=User.groups.through, dispatch_uid="console.audit.services.groups"
    )


# --- reads ------------------------------------------------------------------------------
def audit_event_list(*, kind: str = "", username: str = "") -> QuerySet[AuditEvent]:
    """Newest first; `username` matches part of the name, any case."""
    events = AuditEvent.objects.all()
    if kind:
        events = events.filter(kind=kind)
    if username:
        events = events.filter(username__icontains=username)
    return events
