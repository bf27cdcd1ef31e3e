"""Writes owned by the console app itself."""

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from rest_framework.authtoken.models import Token

from console.roles import has_any_role


@transaction.atomic
def api_token_issue(*, user: User) -> Token:
    """The user's API token, made on first use. Only people with a console role get one:
    the API would refuse every call without it."""
    if not has_any_role(user):
        raise PermissionDenied(
            "You need a console role (viewer, responder, commander or admin) for an API token."
        )
    token, _ = Token.objects.get_or_create(user=user)
    return token
