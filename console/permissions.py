"""Who may do what: the DRF permission classes of the API, and `require`, the one check
the services make before a change.

Finer checks (may this user resolve?) are made per action with user.has_perm(); each
app names its permission strings once, in its own permissions module.
"""

from django.contrib.auth.models import AnonymousUser, User
from django.utils.functional import Promise
from django.utils.translation import gettext_noop
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from console.errors import NotAllowed
from console.roles import has_any_role


class HasConsoleRole(BasePermission):
    message = "You need a console role (viewer, responder, commander or admin)."

    def has_permission(self, request: Request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and has_any_role(request.user))


def require_perm(perm: str):
    """A DRF permission class that requires one Django permission."""

    class _Perm(BasePermission):
        message = f"Your role does not allow this ({perm})."

        def has_permission(self, request: Request, view) -> bool:
            return bool(request.user and request.user.has_perm(perm))

    _Perm.__name__ = f"Require_{perm.replace('.', '_')}"
    return _Perm


def require(actor: User | AnonymousUser | None, perm: str, what: str | Promise) -> None:
    """PermissionDenied ("Your role does not allow you to <what>.") unless `actor` is a
    signed-in user holding `perm`; pages answer it 403, the API too. `what` may be lazy
    (gettext_lazy): the API says it in English, a page in its own language."""
    if actor is None or not actor.is_authenticated or not actor.has_perm(perm):
        raise NotAllowed(
            gettext_noop("Your role does not allow you to %(what)s."), params={"what": what}
        )
