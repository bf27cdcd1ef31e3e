"""Heartbeats: list them, make an HTTP one (its token shown once), remove one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console.api.base import LIST_ERRORS, parse_body
from console.http import AuthedApiRequest
from pager.api import selectors
from pager.api.base import (
    ITEM_CHANGE_ERRORS,
    TAG,
    ManageApi,
    PagerApi,
    slug_parameter,
    team_id_of,
)
from pager.api.serializers.heartbeats import (
    HeartbeatCreatedSerializer,
    HeartbeatInputSerializer,
    HeartbeatSerializer,
)
from pager.heartbeats import services

CREATE_ERRORS = {k: v for k, v in ITEM_CHANGE_ERRORS.items() if k not in (404, 409)}


class _HeartbeatApi(PagerApi):
    noun = "heartbeat"

    def get_permissions(self):
        # Reading needs VIEW; making and removing them MANAGE.
        if self.request.method not in ("GET", "HEAD"):
            return [p() for p in ManageApi.permission_classes]
        return super().get_permissions()


@extend_schema(tags=[TAG])
class HeartbeatListApi(_HeartbeatApi):
    """Heartbeats (dead-man's switches): HTTP check-ins, each Alertmanager replica's
    Watchdog, and the console's own workers and beat. One that stops checking in opens
    an incident that pages its team. Paginated (`?page=`)."""

    @extend_schema(
        operation_id="pager_heartbeats_list",
        summary="List heartbeats",
        responses={200: HeartbeatSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        page = self.paginate_queryset(selectors.heartbeat_list())
        data = HeartbeatSerializer(page, many=True, context={"request": request}).data
        return self.get_paginated_response(data)

    @extend_schema(
        operation_id="pager_heartbeats_create",
        summary="Add an HTTP heartbeat (commander): its token is shown once",
        description="Answers the heartbeat with `token`: check in with POST `beat_url` and "
        "`Authorization: Bearer <token>` at least every `interval_seconds`. Only a hash "
        "of the token is kept; it is never shown again.",
        request=HeartbeatInputSerializer,
        responses={201: HeartbeatCreatedSerializer, **CREATE_ERRORS},
    )
    def post(self, request: AuthedApiRequest):
        data = parse_body(HeartbeatInputSerializer, request)
        heartbeat, token = services.heartbeat_create(
            name=data["name"],
            team_id=team_id_of(data.get("team")),
            interval_seconds=data["interval_seconds"],
            grace_seconds=data["grace_seconds"],
            actor=request.user,
        )
        context = {"request": request, "token": token}
        shown = selectors.heartbeat_by_slug(heartbeat.slug) or heartbeat
        return Response(HeartbeatCreatedSerializer(shown, context=context).data, status=201)


@extend_schema(tags=[TAG], parameters=[slug_parameter("heartbeat")])
class HeartbeatDetailApi(_HeartbeatApi):
    """Remove a heartbeat (commander). One that is missing first resolves its alert."""

    @extend_schema(
        operation_id="pager_heartbeats_destroy",
        summary="Remove a heartbeat (commander)",
        request=None,
        responses={204: None, **ITEM_CHANGE_ERRORS},
    )
    def delete(self, request: AuthedApiRequest, slug: str):
        heartbeat = self.found_slug(selectors.heartbeat_by_slug(slug), slug)
        services.heartbeat_delete(heartbeat_id=heartbeat.pk, actor=request.user)
        return Response(status=204)
