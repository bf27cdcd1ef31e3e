"""What the pager's API views share: the base class, the documented answers and the
checks of a path's id or slug before a service sees it.

Reads need pager VIEW, a person's own contact methods, taking a shift and swaps OWN,
configuration MANAGE (pager/permissions.py); the services check again. A service's
refusal answers like everywhere else (console/api/errors.py); the pager's "invalid"
refusals (a bad time, an unknown name, an unreadable calendar) are the request's fault
and answer 400.
"""

from __future__ import annotations

from typing import TypeVar

from django.utils.translation import gettext_noop
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from console.api.base import E400, ITEM_READ_ERRORS, ConsoleApi, DomainErrorSerializer
from console.errors import NotFound
from console.permissions import HasConsoleRole, require_perm
from pager import permissions as perms
from pager.models import Team

TAG = "pager"
T = TypeVar("T")

E400_REFUSED = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description='The body or a query parameter is invalid: {"<field>": ["<message>", …]}, '
    'or {"detail", "code": "invalid"} when the change cannot be made as asked (a time '
    "already over, someone not in the team, an unreadable calendar); `detail` says why.",
)
E409_STATE = OpenApiResponse(
    DomainErrorSerializer,
    description="Refused in its current state (e.g. already cancelled, no longer open); "
    "`detail` says why.",
)
ITEM_CHANGE_ERRORS = {**ITEM_READ_ERRORS, 400: E400_REFUSED, 409: E409_STATE}
ITEM_QUERY_ERRORS = {**ITEM_READ_ERRORS, 400: E400}


def slug_parameter(noun: str) -> OpenApiParameter:
    return OpenApiParameter(
        "slug",
        str,
        OpenApiParameter.PATH,
        description=f"The {noun}'s slug.",
        pattern=r"^[-a-zA-Z0-9_]+$",
    )


class PagerApi(ConsoleApi):
    domain_error_status = {"invalid": 400, "ical_invalid": 400}
    permission_classes = [HasConsoleRole, require_perm(perms.VIEW)]

    def found_slug(self, row: T | None, slug: str) -> T:
        """`row`, or the 404 naming the noun and the slug asked for."""
        if row is None:
            raise NotFound(
                gettext_noop("There is no %(noun)s %(slug)s."),
                params={"noun": self.noun, "slug": repr(slug[:100])},
            )
        return row


class OwnApi(PagerApi):
    permission_classes = [HasConsoleRole, require_perm(perms.OWN)]


class ManageApi(PagerApi):
    permission_classes = [HasConsoleRole, require_perm(perms.MANAGE)]


def team_id_of(slug: str | None, field: str = "team") -> int | None:
    """The id of the team a body names by slug (None: no team); 400 naming the field for
    a slug no team has."""
    if not slug:
        return None
    found = Team.objects.filter(slug=slug).values_list("pk", flat=True).first()
    if found is None:
        raise serializers.ValidationError({field: [f"There is no team {slug!r}."]})
    return int(found)
