"""Teams and who is on call: for a team (now or at a moment) and for an incident (its
owning team, why, the escalation and its pages)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console.api.base import ITEM_READ_ERRORS, LIST_ERRORS
from console.http import AuthedApiRequest
from pager.api import selectors
from pager.api.base import ITEM_QUERY_ERRORS, TAG, PagerApi, slug_parameter
from pager.api.serializers.teams import (
    IncidentOnCallSerializer,
    OnCallQuerySerializer,
    TeamOnCallSerializer,
    TeamSerializer,
)


def _oncall_context(teams: list[Any], at=None) -> dict[str, Any]:
    schedules = [s for team in teams for s in team.schedules.all()]
    return {"oncall": selectors.oncall_many(schedules, at)}


class TeamApi(PagerApi):
    noun = "team"


@extend_schema(tags=[TAG])
class TeamListApi(TeamApi):
    """Every team: the labels it owns, its escalation policy, its members and its
    schedules with who is on call in each now and next. Paginated (`?page=`)."""

    @extend_schema(
        operation_id="pager_teams_list",
        summary="List teams with who is on call",
        responses={200: TeamSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        page = self.paginate_queryset(selectors.team_list()) or []
        data = TeamSerializer(page, many=True, context=_oncall_context(page)).data
        return self.get_paginated_response(data)


@extend_schema(tags=[TAG], parameters=[slug_parameter("team")])
class TeamDetailApi(TeamApi):
    """One team as listed."""

    @extend_schema(
        operation_id="pager_teams_retrieve",
        summary="One team with who is on call",
        responses={200: TeamSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, slug: str):
        team = self.found_slug(selectors.team_by_slug(slug), slug)
        return Response(TeamSerializer(team, context=_oncall_context([team])).data)


@extend_schema(tags=[TAG], parameters=[slug_parameter("team")])
class TeamOnCallApi(TeamApi):
    """Who is on call in each of the team's schedules at `?at=` (now when absent), and
    the next shift to begin after it."""

    @extend_schema(
        operation_id="pager_teams_oncall",
        summary="Who is on call now and next, per schedule",
        parameters=[OnCallQuerySerializer],
        responses={200: TeamOnCallSerializer, **ITEM_QUERY_ERRORS},
    )
    def get(self, request: AuthedApiRequest, slug: str):
        query = OnCallQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        at = query.validated_data.get("at") or timezone.now()
        team = self.found_slug(selectors.team_by_slug(slug), slug)
        schedules = list(team.schedules.all())
        body = {"team": team, "at": at, "schedules": schedules}
        context = {"oncall": selectors.oncall_many(schedules, at)}
        return Response(TeamOnCallSerializer(body, context=context).data)


@extend_schema(tags=[TAG])
class IncidentOnCallApi(PagerApi):
    """Who is on call for the incident: the team that owns it and why (the labels it
    matched), who is on call now and next in the team's schedules, and the escalation
    of its current episode with every page and delivery."""

    noun = "incident"

    @extend_schema(
        operation_id="pager_incidents_oncall",
        summary="Who is on call for an incident, and its escalation",
        responses={200: IncidentOnCallSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        found = self.found(selectors.incident_oncall(incident_id=pk), pk)
        context = {"request": request}
        return Response(IncidentOnCallSerializer(found, context=context).data)
