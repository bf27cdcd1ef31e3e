"""API tokens: issue one per client, list them, revoke them.

Tokens are django-rest-knox's (console/api_tokens/models.py): the key is shown once, when
issued; only its digest is kept. Each ends after API_TOKEN_TTL_HOURS. A person holds at
most API_TOKEN_LIMIT_PER_USER unexpired ones. The owner lists and revokes their own;
an admin (the admin role's console.view_apitoken / console.delete_apitoken, or a
superuser) anyone's. Account changes end them all (console/api_tokens/revocation.py).
Every revocation is written to the audit log: whose, which, by whom and why.
"""

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_noop
from knox.settings import knox_settings

from console.api_tokens.models import ApiToken
from console.audit import reasons
from console.audit.models import AuditKind, AuditMethod
from console.audit.reasons import audit_reason
from console.audit.services import audit_record
from console.bounds import MAX_ID
from console.errors import DomainError, NotAllowed, NotFound
from console.roles import has_any_role
from console.service_accounts import is_service_account

VIEW_ANY = "console.view_apitoken"
REVOKE_ANY = "console.delete_apitoken"
NO_ROLE = "You need a console role (viewer, responder, commander or admin) for an API token."


@transaction.atomic
def api_token_issue(*, user: User, client: str = "") -> tuple[ApiToken, str]:
    """A new token for `user` and its key (shown this once). Only people with a console
    role get one: the API would refuse every call without it; service accounts act
    inside the console and never hold one."""
    if is_service_account(user):
        raise NotAllowed(
            gettext_noop("%(username)s is a service account; it cannot hold an API token."),
            params={"username": user.get_username()},
        )
    if not has_any_role(user):
        raise PermissionDenied(NO_ROLE)
    # The user's row is the lock: two requests at once cannot both take the last place.
    User.objects.select_for_update().filter(pk=user.pk).exists()
    now = timezone.now()
    # Ended tokens count for nothing; knox would delete them at their next use anyway.
    ApiToken.objects.filter(user=user, expiry__lte=now).delete()
    limit = knox_settings.TOKEN_LIMIT_PER_USER
    if limit is not None and ApiToken.objects.filter(user=user).count() >= limit:
        raise DomainError(
            gettext_noop(
                "You already hold %(limit)s API tokens, the most one person may "
                "(API_TOKEN_LIMIT_PER_USER). Revoke one you no longer use first: "
                "DELETE /api/v1/auth/tokens/<id>/."
            ),
            code="conflict",
            params={"limit": limit},
        )
    token, key = ApiToken.objects.create(user=user, client=client)
    return token, key


def api_token_list(*, actor: User, username: str = "") -> QuerySet[ApiToken]:
    """The unexpired tokens of `username` (the actor's own when empty), newest first.
    Someone else's only for an admin."""
    tokens: QuerySet[ApiToken] = ApiToken.objects.filter(expiry__gt=timezone.now()).select_related(
        "user"
    )
    if not username or username == actor.get_username():
        return tokens.filter(user=actor)
    if not actor.has_perm(VIEW_ANY):
        raise NotAllowed(gettext_noop("Only an admin can see other people's API tokens."))
    return tokens.filter(user__username=username)


@transaction.atomic
def api_token_revoke(
    *,
    actor: User,
    token_id: int,
    method: str = AuditMethod.API,
    request: HttpRequest | None = None,
) -> None:
    """Revoke one token: the actor's own, or anyone's for an admin. Someone else's token
    is "not found" to everyone else, as if it did not exist."""
    token = None
    if 0 < token_id <= MAX_ID:  # beyond bigint no row can match (and PostgreSQL errs)
        token = (
            ApiToken.objects.select_for_update().select_related("user").filter(pk=token_id).first()
        )
    if token is None or (token.user_id != actor.pk and not actor.has_perm(REVOKE_ANY)):
        raise NotFound(gettext_noop("API token #%(id)s does not exist."), params={"id": token_id})
    own = token.user_id == actor.pk
    _revoke(
        owner=token.user,
        tokens=[token],
        method=method,
        reason=audit_reason(reasons.REVOKED_OWN)
        if own
        else audit_reason(reasons.REVOKED_BY, user=actor.get_username()),
        by=actor,
        request=request,
    )


@transaction.atomic
def api_tokens_revoke_all(
    *, user_id: int, method: str, reason: str, request: HttpRequest | None = None
) -> int:
    """End every token of a user (an account change: nobody chose which); the number."""
    tokens = list(ApiToken.objects.select_for_update().filter(user_id=user_id).order_by("id"))
    if not tokens:
        return 0
    owner = User.objects.get(pk=user_id)
    _revoke(owner=owner, tokens=tokens, method=method, reason=reason, by=None, request=request)
    return len(tokens)


def _revoke(
    *,
    owner: User,
    tokens: list[ApiToken],
    method: str,
    reason: str,
    by: User | None,
    request: HttpRequest | None,
) -> None:
    listed: list[dict[str, Any]] = [{"id": t.pk, "client": t.client} for t in tokens]
    ApiToken.objects.filter(pk__in=[t.pk for t in tokens]).delete()
    audit_record(
        kind=AuditKind.TOKEN_REVOKED,
        method=method,
        request=request,
        user=owner,
        reason=reason,
        old={"tokens": listed},
        new={"by": by.get_username() if by is not None else None},
    )
