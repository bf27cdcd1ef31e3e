"""REST API of postmortems and action items: draft a postmortem for an
incident, read it, export it as Markdown; action items CRUD with filters. The same
services and permissions as the pages."""

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from console.api.base import (
    E400,
    ITEM_READ_ERRORS,
    ITEM_WRITE_ERRORS,
    LIST_ERRORS,
    WRITE_ERRORS,
    ConsoleApi,
    ErrorSerializer,
    parse_body,
)
from console.errors import NotFound
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from postmortems import selectors, services
from postmortems.markdown.document import postmortem_markdown
from postmortems.permissions import DRAFT, MANAGE, VIEW, VIEW_ITEMS
from postmortems.serializers import (
    ActionItemQuerySerializer,
    ActionItemSerializer,
    ActionItemWriteSerializer,
    PostmortemDraftSerializer,
    PostmortemSerializer,
)

TAG_PM, TAG_ITEMS = "postmortems", "action items"
# Creating an item names its incident (and maybe postmortem) in the body, not the path.
E404_BODY_IDS = OpenApiResponse(
    ErrorSerializer, description="No incident, or no postmortem, with the id in the body."
)


def _postmortem(pk: int):
    pm = selectors.postmortem_get(postmortem_id=pk)
    if pm is None:
        raise NotFound(f"Postmortem #{pk} does not exist.")
    return pm


class PostmortemApi(ConsoleApi):
    noun = "postmortem"


class ActionItemApi(ConsoleApi):
    noun = "action item"


@extend_schema(tags=[TAG_PM])
class IncidentPostmortemApi(ConsoleApi):
    """Draft the incident's postmortem (201), or answer the one it has (200). Big incidents
    are drafted on a worker: `draft_state` is "pending" until it is ready. The draft is
    written in `language` (default: the request's language); an unknown one is a 400
    naming the field."""

    noun = "incident"
    permission_classes = [HasConsoleRole, require_perm(DRAFT)]

    @extend_schema(
        operation_id="incidents_postmortem_draft",
        summary="Draft the incident's postmortem",
        request=PostmortemDraftSerializer,
        responses={
            201: PostmortemSerializer, 200: PostmortemSerializer, 400: E400,
            **ITEM_WRITE_ERRORS,
        },
    )  # fmt: skip
    def post(self, request: AuthedApiRequest, pk: int):
        body = parse_body(PostmortemDraftSerializer, request)
        existed = selectors.postmortem_for_incident(incident_id=pk) is not None
        pm = services.postmortem_draft(
            incident_id=pk, actor=request.user, language=body.get("language")
        )
        code = status.HTTP_200_OK if existed else status.HTTP_201_CREATED
        return Response(PostmortemSerializer(_postmortem(pm.pk)).data, status=code)


@extend_schema(tags=[TAG_PM])
class PostmortemDetailApi(PostmortemApi):
    """The postmortem: sections in order, its timeline, impact, stored metric snapshots,
    reviewers and action items."""

    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="postmortems_retrieve",
        summary="One postmortem",
        responses={200: PostmortemSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        return Response(PostmortemSerializer(_postmortem(pk)).data)


@extend_schema(tags=[TAG_PM])
class PostmortemExportApi(PostmortemApi):
    """The postmortem as one Markdown document."""

    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="postmortems_export_markdown",
        summary="Export a postmortem as Markdown",
        responses={
            (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="Markdown"),
            **ITEM_READ_ERRORS,
        },
    )
    def get(self, request: AuthedApiRequest, pk: int):
        pm = _postmortem(pk)
        response = HttpResponse(
            postmortem_markdown(pm), content_type="text/markdown; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="postmortem-{pm.pk}.md"'
        return response


def _item_values(data: dict) -> dict:
    keys = ("title", "description", "owner", "due_date", "priority", "category", "external_url")
    return {k: data[k] for k in keys if k in data}


@extend_schema(tags=[TAG_ITEMS])
class ActionItemListApi(ActionItemApi):
    """Action items, soonest due first, filtered and paginated (GET); a new one (POST)."""

    def get_permissions(self):
        perm = MANAGE if self.request.method == "POST" else VIEW_ITEMS
        return [HasConsoleRole(), require_perm(perm)()]

    @extend_schema(
        operation_id="action_items_list",
        summary="List action items",
        parameters=[ActionItemQuerySerializer],
        responses={200: ActionItemSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = ActionItemQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        items = selectors.action_item_list(
            status=q.get("status", ""), owner=q.get("owner", ""), category=q.get("category", ""),
            incident=q.get("incident"), overdue=q.get("overdue", False), today=timezone.localdate(),
        )  # fmt: skip
        page = self.paginate_queryset(items)
        return self.get_paginated_response(ActionItemSerializer(page, many=True).data)

    @extend_schema(
        operation_id="action_items_create",
        summary="Create an action item (responder)",
        request=ActionItemWriteSerializer,
        responses={201: ActionItemSerializer, **WRITE_ERRORS, 404: E404_BODY_IDS},
    )
    def post(self, request: AuthedApiRequest):
        body = ActionItemWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if "incident" not in data or "title" not in data:
            return Response({"detail": "incident and title are required."}, status=400)
        item = services.action_item_create(
            incident_id=data["incident"], actor=request.user, values=_item_values(data),
            postmortem_id=data.get("postmortem"), status=data.get("status"),
            reason=data.get("wont_do_reason", ""),
        )  # fmt: skip
        return Response(ActionItemSerializer(item).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=[TAG_ITEMS])
class ActionItemDetailApi(ActionItemApi):
    """One action item: read, change (any subset of fields, and the status; won't do needs
    `wont_do_reason`), or delete (admins only; others mark it won't do)."""

    def get_permissions(self):
        perm = VIEW_ITEMS if self.request.method == "GET" else MANAGE
        return [HasConsoleRole(), require_perm(perm)()]

    def _item(self, pk):
        return self.found(selectors.action_item_list().filter(pk=pk).first(), pk)

    @extend_schema(operation_id="action_items_retrieve", summary="One action item",
                   responses={200: ActionItemSerializer, **ITEM_READ_ERRORS})  # fmt: skip
    def get(self, request: AuthedApiRequest, pk: int):
        return Response(ActionItemSerializer(self._item(pk)).data)

    @extend_schema(operation_id="action_items_update", summary="Change an action item",
                   request=ActionItemWriteSerializer,
                   responses={200: ActionItemSerializer, **WRITE_ERRORS})  # fmt: skip
    def patch(self, request: AuthedApiRequest, pk: int):
        self._item(pk)
        body = ActionItemWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        services.action_item_save(
            item_id=pk, actor=request.user, values=_item_values(data),
            status=data.get("status"), reason=data.get("wont_do_reason", ""),
        )  # fmt: skip
        return Response(ActionItemSerializer(self._item(pk)).data)

    @extend_schema(operation_id="action_items_delete", summary="Delete an action item (admin)",
                   responses={204: None, **ITEM_WRITE_ERRORS})  # fmt: skip
    def delete(self, request: AuthedApiRequest, pk: int):
        services.action_item_delete(item_id=pk, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
