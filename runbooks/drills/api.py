"""REST API of drills: plans (list, create, read, start) and runs (list, read, stop). The
same services and roles as the pages: commanders plan, start and stop; every console role
reads. A refused start answers 409 with the reason ("busy", "not_a_drill_target"); a bad
plan 400 naming the field."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from console.errors import DomainError
from console.permissions import HasConsoleRole, require_perm
from incidents.api import E400, ITEM_READ_ERRORS, ITEM_WRITE_ERRORS, READ_ERRORS, IncidentApi, _body
from runbooks.drills import selectors, services
from runbooks.drills.serializers import (
    DrillPlanInputSerializer,
    DrillPlanSerializer,
    DrillRunDetailSerializer,
    DrillRunQuerySerializer,
    DrillRunSerializer,
    DrillStopInputSerializer,
)

TAG = "drills"
VIEW = "runbooks.view_drillrun"
PLAN_PARAM = OpenApiParameter("id", int, OpenApiParameter.PATH, description="Drill plan id.")
RUN_PARAM = OpenApiParameter("id", int, OpenApiParameter.PATH, description="Drill run id.")


class DrillApi(IncidentApi):
    pagination_class = None

    def get_permissions(self):
        perm = services.RUN_DRILL if self.request.method == "POST" else VIEW
        return [HasConsoleRole(), require_perm(perm)()]

    def handle_exception(self, exc):
        if isinstance(exc, DomainError) and exc.code == "invalid":
            exc = ValidationError({"detail": str(exc)})
        return super().handle_exception(exc)


def _run_response(run_id: int, code=status.HTTP_200_OK) -> Response:
    run = selectors.drill_run_get(run_id=run_id)
    if run is None:
        raise NotFound(f"Drill run #{run_id} does not exist.")
    return Response(DrillRunDetailSerializer(run).data, status=code)


@extend_schema(tags=[TAG])
class DrillPlanListApi(DrillApi):
    """Every drill plan (GET), or a new one (POST, commanders)."""

    @extend_schema(
        operation_id="drill_plans_list",
        summary="List drill plans",
        responses={200: DrillPlanSerializer(many=True), **READ_ERRORS},
    )
    def get(self, request):
        return Response(DrillPlanSerializer(selectors.drill_plans(), many=True).data)

    @extend_schema(
        operation_id="drill_plans_create",
        summary="Plan a drill",
        request=DrillPlanInputSerializer,
        responses={201: DrillPlanSerializer, 400: E400, 409: ITEM_WRITE_ERRORS[409], **READ_ERRORS},
    )
    def post(self, request):
        plan = services.drill_plan_create(
            actor=request.user, **_body(DrillPlanInputSerializer, request)
        )
        return Response(DrillPlanSerializer(plan).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=[TAG], parameters=[PLAN_PARAM])
class DrillPlanDetailApi(DrillApi):
    """One drill plan."""

    @extend_schema(
        operation_id="drill_plans_retrieve",
        summary="A drill plan",
        responses={200: DrillPlanSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request, pk: int):
        plan = selectors.drill_plan_get(plan_id=pk)
        if plan is None:
            raise NotFound(f"Drill plan #{pk} does not exist.")
        return Response(DrillPlanSerializer(plan).data)


@extend_schema(tags=[TAG], parameters=[PLAN_PARAM])
class DrillPlanStartApi(DrillApi):
    """Start a drill of this plan (commanders). The worker injects the fault once the run
    is recorded."""

    @extend_schema(
        operation_id="drill_plans_start",
        summary="Start a drill",
        request=None,
        responses={201: DrillRunDetailSerializer, **ITEM_WRITE_ERRORS},
    )
    def post(self, request, pk: int):
        run = services.drill_start(plan_id=pk, actor=request.user)
        return _run_response(run.pk, status.HTTP_201_CREATED)


@extend_schema(tags=[TAG])
class DrillRunListApi(DrillApi):
    """Drill runs, newest first (at most 50), optionally for one runbook or target."""

    @extend_schema(
        operation_id="drill_runs_list",
        summary="List drill runs",
        parameters=[DrillRunQuerySerializer],
        responses={200: DrillRunSerializer(many=True), 400: E400, **READ_ERRORS},
    )
    def get(self, request):
        query = DrillRunQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        runs = selectors.drill_runs(**query.validated_data)
        return Response(DrillRunSerializer(runs, many=True).data)


@extend_schema(tags=[TAG], parameters=[RUN_PARAM])
class DrillRunDetailApi(DrillApi):
    """A drill run with its plan as it ran, its scorecard and its history."""

    @extend_schema(
        operation_id="drill_runs_retrieve",
        summary="A drill run",
        responses={200: DrillRunDetailSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request, pk: int):
        return _run_response(pk)


@extend_schema(tags=[TAG], parameters=[RUN_PARAM])
class DrillRunStopApi(DrillApi):
    """Stop a drill (commanders): the worker clears the fault, restores the baseline and
    scores the run."""

    @extend_schema(
        operation_id="drill_runs_stop",
        summary="Stop a drill",
        request=DrillStopInputSerializer,
        responses={200: DrillRunDetailSerializer, 400: E400, **ITEM_WRITE_ERRORS},
    )
    def post(self, request, pk: int):
        body = _body(DrillStopInputSerializer, request)
        services.drill_stop(run_id=pk, actor=request.user, reason=body["reason"])
        return _run_response(pk)
