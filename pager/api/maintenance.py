"""Maintenance windows: list, plan and cancel them."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console.api.base import LIST_ERRORS, parse_body
from console.http import AuthedApiRequest
from pager.api import selectors
from pager.api.base import ITEM_CHANGE_ERRORS, TAG, ManageApi, PagerApi, team_id_of
from pager.api.serializers.maintenance import (
    WindowInputSerializer,
    WindowListQuerySerializer,
    WindowSerializer,
)
from pager.maintenance import services
from pager.maintenance.selectors import window_list

CREATE_ERRORS = {k: v for k, v in ITEM_CHANGE_ERRORS.items() if k not in (404, 409)}


class _WindowApi(PagerApi):
    noun = "maintenance window"


@extend_schema(tags=[TAG])
class WindowListApi(_WindowApi):
    """Maintenance windows, newest first: current and coming ones, or every one with
    `?include_past=true`. Inside a window incidents still open, but nobody is paged;
    each occurrence ends with a summary. Paginated (`?page=`)."""

    def get_permissions(self):
        # Reading needs VIEW; planning one MANAGE.
        if self.request.method not in ("GET", "HEAD"):
            return [p() for p in ManageApi.permission_classes]
        return super().get_permissions()

    @extend_schema(
        operation_id="pager_maintenance_windows_list",
        summary="List maintenance windows",
        parameters=[WindowListQuerySerializer],
        responses={200: WindowSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = WindowListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        windows = window_list(include_past=query.validated_data["include_past"])
        page = self.paginate_queryset(windows)
        return self.get_paginated_response(WindowSerializer(page, many=True).data)

    @extend_schema(
        operation_id="pager_maintenance_windows_create",
        summary="Plan a maintenance window (commander)",
        description="A team (everything it owns), label matchers, or both; once, or "
        "repeated by an RRULE in `time_zone`. Each occurrence lasts at most 31 days.",
        request=WindowInputSerializer,
        responses={201: WindowSerializer, **CREATE_ERRORS},
    )
    def post(self, request: AuthedApiRequest):
        data = parse_body(WindowInputSerializer, request)
        window = services.window_create(
            name=data["name"],
            team_id=team_id_of(data.get("team")),
            matchers=data["matchers"],
            starts_at=data["starts_at"],
            ends_at=data["ends_at"],
            recurrence=data["recurrence"],
            time_zone=data["time_zone"],
            reason=data["reason"],
            actor=request.user,
        )
        found = selectors.window_get(window_id=window.pk)
        return Response(WindowSerializer(found).data, status=201)


@extend_schema(tags=[TAG])
class WindowCancelApi(_WindowApi):
    """End the window now (commander): no occurrence from now on; one under way ends
    now and gets its summary. No body."""

    permission_classes = ManageApi.permission_classes

    @extend_schema(
        operation_id="pager_maintenance_windows_cancel",
        summary="Cancel a maintenance window (commander)",
        request=None,
        responses={200: WindowSerializer, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        self.found(selectors.window_get(window_id=pk), pk)
        services.window_cancel(window_id=pk, actor=request.user)
        return Response(WindowSerializer(selectors.window_get(window_id=pk)).data)
