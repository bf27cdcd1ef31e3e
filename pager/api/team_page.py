"""Page a team's on-call people now for an incident (pager/paging/services/manual.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from console.api.base import READ_ERRORS, DomainErrorSerializer, ErrorSerializer, parse_body
from console.bounds import IdField
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from pager.api import selectors
from pager.api.base import E400_REFUSED, TAG, PagerApi, slug_parameter
from pager.api.serializers.pages import PageSerializer
from pager.paging.services.manual import MESSAGE_MAX_CHARS, PAGE_TEAM, oncall_page


class TeamPageInputSerializer(serializers.Serializer):
    incident = IdField(help_text="The incident's id (open: neither mitigated nor resolved).")
    message = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MESSAGE_MAX_CHARS,
        help_text="Why you page them, in a line; shown on the timeline.",
    )
    key = serializers.RegexField(
        r"^[A-Za-z0-9_.:-]{1,64}$",
        required=False,
        allow_blank=True,
        default="",
        max_length=64,
        help_text="Makes the request idempotent: the same key for the same team and "
        "incident answers the pages made the first time and pages nobody again. Empty: a "
        "new request each time.",
    )


E404_TEAM = OpenApiResponse(
    ErrorSerializer, description="No team with this slug, or no incident with the body's id."
)
E409_PAGE = OpenApiResponse(
    DomainErrorSerializer,
    description="Nobody was paged. Code `nobody_on_call`: the team has no schedule, or "
    "nobody is on call in its schedules now; `detail` names the team. Code "
    "`invalid_state`: the incident is mitigated or resolved.",
)


@extend_schema(tags=[TAG], parameters=[slug_parameter("team")])
class TeamPageApi(PagerApi):
    """Page everyone on call now in the team's schedules for an incident, to bring the
    team in (responder): one page per person, sent through their contact methods like the
    escalation's, each on the incident's timeline with your name. The incident's own
    escalation goes on as it was. Answers the pages (201)."""

    noun = "team"
    permission_classes = [HasConsoleRole, require_perm(PAGE_TEAM)]

    @extend_schema(
        operation_id="pager_teams_page",
        summary="Page a team's on-call people for an incident (responder)",
        request=TeamPageInputSerializer,
        responses={
            201: PageSerializer(many=True),
            400: E400_REFUSED,
            **READ_ERRORS,
            404: E404_TEAM,
            409: E409_PAGE,
        },
    )
    def post(self, request: AuthedApiRequest, slug: str):
        data = parse_body(TeamPageInputSerializer, request)
        pages = oncall_page(
            actor=request.user,
            team_slug=slug,
            incident_id=data["incident"],
            message=data["message"],
            key=data["key"] or None,
        )
        filters = selectors.PageFilters(incident=data["incident"])
        rows = selectors.page_list(filters=filters).filter(pk__in=[p.pk for p in pages])
        body = PageSerializer(rows.order_by("pk"), many=True, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)
