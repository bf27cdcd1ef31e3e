"""Types for who acts: the console's user model, and requests whose user is signed in.

Pages go through `console_view` and API views through `ConsoleApi`'s permission classes,
both of which refuse an anonymous user, so a view's `request.user` is a `User` and is
what services take as `actor` (None where no person acts: beat, the guard's checks).
"""

from typing import TYPE_CHECKING

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails
from rest_framework.request import Request

Actor = User


class HtmxRequest(HttpRequest):
    """Any page request: HtmxMiddleware sets `htmx` on every one."""

    htmx: HtmxDetails


class AuthedRequest(HtmxRequest):
    """A page request that `console_view` let through: the user is signed in."""

    user: User


class AuthedApiRequest(Request):
    """An API request that `ConsoleApi`'s permission classes let through."""

    if TYPE_CHECKING:

        @property
        def user(self) -> User: ...

        @user.setter
        def user(self, value: User) -> None: ...
