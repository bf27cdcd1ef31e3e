"""REST API of the remediation actions: request (with an idempotency key),
preview, read, approve, reject, cancel, undo. The same services and permissions as the
console pages; a refused change answers 409 {"detail", "code"} ("busy" when the target has
an active run), bad parameters 400, an unknown run or incident 404.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from actions import selectors, services
from actions.permissions import APPROVE_ACTION, REQUEST_ACTION, VIEW_ACTIONS
from actions.serializers import (
    ActionListQuerySerializer,
    ActionPreviewInputSerializer,
    ActionPreviewSerializer,
    ActionRequestSerializer,
    ActionRunDetailSerializer,
    ActionRunSerializer,
    DecisionInputSerializer,
    UndoInputSerializer,
)
from console.api.base import ITEM_READ_ERRORS, LIST_ERRORS, WRITE_ERRORS, ConsoleApi, parse_body
from console.errors import NotFound
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents import selectors as incident_selectors

TAG = "actions"


def _run_response(run_id: int, code=status.HTTP_200_OK) -> Response:
    run = selectors.action_run_get(run_id=run_id)
    if run is None:
        raise NotFound(f"Action run #{run_id} does not exist.")
    return Response(ActionRunDetailSerializer(run).data, status=code)


class ActionRunApi(ConsoleApi):
    noun = "action run"


class IncidentActionApi(ConsoleApi):
    noun = "incident"


@extend_schema(tags=[TAG])
class ActionRunListApi(ActionRunApi):
    """Every run (the audit view), newest first, filtered and paginated (`?page=`)."""

    permission_classes = [HasConsoleRole, require_perm(VIEW_ACTIONS)]

    @extend_schema(
        operation_id="actions_list",
        summary="List action runs",
        parameters=[ActionListQuerySerializer],
        responses={200: ActionRunSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = ActionListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        runs = selectors.action_run_list(
            filters=selectors.RunFilters.from_params(query.validated_data)
        )
        page = self.paginate_queryset(runs)
        return self.get_paginated_response(ActionRunSerializer(page, many=True).data)


@extend_schema(tags=[TAG])
class IncidentActionsApi(IncidentActionApi):
    """The incident's action runs (GET) or a new one (POST). POST with a key already used
    by the same person answers that run (200) instead of creating another (201)."""

    pagination_class = None  # every run of one incident, a plain list (as the schema says)

    def get_permissions(self):
        perm = REQUEST_ACTION if self.request.method == "POST" else VIEW_ACTIONS
        return [HasConsoleRole(), require_perm(perm)()]

    @extend_schema(
        operation_id="incidents_actions_list",
        summary="The incident's action runs",
        responses={200: ActionRunSerializer(many=True), **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        incident_selectors.incident_get(incident_id=pk)  # 404, not an empty list
        runs = selectors.incident_action_runs(incident_id=pk)
        return Response(ActionRunSerializer(runs, many=True).data)

    @extend_schema(
        operation_id="incidents_actions_request",
        summary="Request an action (responder)",
        request=ActionRequestSerializer,
        responses={
            201: ActionRunDetailSerializer,
            200: OpenApiResponse(ActionRunDetailSerializer, description="Same key: same run."),
            **WRITE_ERRORS,
        },
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(ActionRequestSerializer, request)
        run, created = services.action_run_request(
            incident_id=pk,
            actor=request.user,
            kind=data["kind"],
            params=data["params"],
            idempotency_key=data["idempotency_key"],
        )
        return _run_response(run.pk, status.HTTP_201_CREATED if created else status.HTTP_200_OK)


@extend_schema(tags=[TAG])
class IncidentActionPreviewApi(IncidentActionApi):
    """What the action would do now: current -> desired, the server-side dry run, whether
    it needs approval and whether the target is busy. Changes nothing in the cluster."""

    permission_classes = [HasConsoleRole, require_perm(REQUEST_ACTION)]

    @extend_schema(
        operation_id="incidents_actions_preview",
        summary="Preview an action",
        request=ActionPreviewInputSerializer,
        responses={200: ActionPreviewSerializer, **WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(ActionPreviewInputSerializer, request)
        preview = services.action_run_preview(
            incident_id=pk, actor=request.user, kind=data["kind"], params=data["params"]
        )
        return Response(ActionPreviewSerializer(preview).data)


@extend_schema(tags=[TAG])
class ActionRunDetailApi(ActionRunApi):
    """One run with its audit events."""

    permission_classes = [HasConsoleRole, require_perm(VIEW_ACTIONS)]

    @extend_schema(
        operation_id="actions_retrieve",
        summary="One action run",
        responses={200: ActionRunDetailSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        return _run_response(pk)


def _decision_view(name: str, perm: str, summary: str, doc: str, call):
    @extend_schema(tags=[TAG])
    class DecisionApi(ActionRunApi):
        permission_classes = [HasConsoleRole, require_perm(perm)]

        @extend_schema(
            operation_id=f"actions_{name}",
            summary=summary,
            description=doc,
            request=DecisionInputSerializer,
            responses={200: ActionRunDetailSerializer, **WRITE_ERRORS},
        )
        def post(self, request: AuthedApiRequest, pk: int):
            data = parse_body(DecisionInputSerializer, request)
            run = call(run_id=pk, actor=request.user, note=data["note"])
            return _run_response(run.pk)

    DecisionApi.__name__ = DecisionApi.__qualname__ = f"ActionRun{name.title()}Api"
    return DecisionApi


ActionRunApproveApi = _decision_view(
    "approve",
    APPROVE_ACTION,
    "Approve a run (commander, not the requester)",
    "Queues the run for the worker.",
    services.action_run_approve,
)
ActionRunRejectApi = _decision_view(
    "reject",
    APPROVE_ACTION,
    "Reject a run (commander, not the requester)",
    "The run ends without touching the cluster.",
    services.action_run_reject,
)
ActionRunCancelApi = _decision_view(
    "cancel",
    REQUEST_ACTION,
    "Cancel a run that has not started (requester or commander)",
    "A running write is not interrupted.",
    services.action_run_cancel,
)


@extend_schema(tags=[TAG])
class ActionRunUndoApi(ActionRunApi):
    """Request a new run that restores the state saved before this one (same approval
    policy as any request)."""

    permission_classes = [HasConsoleRole, require_perm(REQUEST_ACTION)]

    @extend_schema(
        operation_id="actions_undo",
        summary="Undo a succeeded run",
        request=UndoInputSerializer,
        responses={201: ActionRunDetailSerializer, **WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(UndoInputSerializer, request)
        run = services.action_run_undo(
            run_id=pk, actor=request.user, idempotency_key=data["idempotency_key"]
        )
        return _run_response(run.pk, status.HTTP_201_CREATED)
