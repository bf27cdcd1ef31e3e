"""DRF permission: an authenticated user holding at least one console role.

Finer checks (may this user resolve?) are made per action with user.has_perm().
"""

from rest_framework.permissions import BasePermission

from console.roles import has_any_role


class HasConsoleRole(BasePermission):
    message = "You need a console role (viewer, responder, commander or admin)."

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and has_any_role(request.user))


def require_perm(perm: str):
    """A DRF permission class that requires one Django permission."""

    class _Perm(BasePermission):
        message = f"Your role does not allow this ({perm})."

        def has_permission(self, request, view) -> bool:
            return bool(request.user and request.user.has_perm(perm))

    _Perm.__name__ = f"Require_{perm.replace('.', '_')}"
    return _Perm
