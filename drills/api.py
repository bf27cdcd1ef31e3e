"""REST API of drills: plans (list, create, read, start) and runs (list, read, stop). The
same services and roles as the pages: commanders plan, start and stop; every console role
reads. A refused start answers 409 with the reason ("busy", "not_a_drill_target"); a bad
plan 400 naming the field."""

from django.utils.translation import gettext_noop
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from console.api.base import (
    E400,
    ITEM_READ_ERRORS,
    ITEM_WRITE_ERRORS,
    READ_ERRORS,
    ConsoleApi,
    DomainErrorSerializer,
    parse_body,
)
from console.errors import NotFound
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from drills import selectors, services
from drills.permissions import RUN_DRILL, VIEW_DRILLS
from drills.serializers import (
    DrillPlanInputSerializer,
    DrillPlanSerializer,
    DrillRunDetailSerializer,
    DrillRunQuerySerializer,
    DrillRunSerializer,
    DrillStopInputSerializer,
)

TAG = "drills"
E409_TARGET = OpenApiResponse(
    DomainErrorSerializer,
    description="The target is not one a drill may act on (not_a_drill_target), or could "
    "not be checked (unavailable); `detail` says why.",
)


class DrillApi(ConsoleApi):
    pagination_class = None
    # The services check a plan's fields ("invalid"): a bad body, so 400 as DRF's own.
    domain_error_status = {"invalid": 400}

    def get_permissions(self):
        perm = RUN_DRILL if self.request.method == "POST" else VIEW_DRILLS
        return [HasConsoleRole(), require_perm(perm)()]


class DrillPlanApi(DrillApi):
    noun = "drill plan"


class DrillRunApi(DrillApi):
    noun = "drill run"


def _run_response(run_id: int, code=status.HTTP_200_OK) -> Response:
    run = selectors.drill_run_get(run_id=run_id)
    if run is None:
        raise NotFound(gettext_noop("Drill run #%(id)s does not exist."), params={"id": run_id})
    return Response(DrillRunDetailSerializer(run).data, status=code)


@extend_schema(tags=[TAG])
class DrillPlanListApi(DrillPlanApi):
    """Every drill plan (GET), or a new one (POST, commanders)."""

    @extend_schema(
        operation_id="drill_plans_list",
        summary="List drill plans",
        responses={200: DrillPlanSerializer(many=True), **READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        return Response(DrillPlanSerializer(selectors.drill_plans(), many=True).data)

    @extend_schema(
        operation_id="drill_plans_create",
        summary="Plan a drill",
        request=DrillPlanInputSerializer,
        responses={201: DrillPlanSerializer, 400: E400, 409: E409_TARGET, **READ_ERRORS},
    )
    def post(self, request: AuthedApiRequest):
        plan = services.drill_plan_create(
            actor=request.user, **parse_body(DrillPlanInputSerializer, request)
        )
        return Response(DrillPlanSerializer(plan).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=[TAG])
class DrillPlanDetailApi(DrillPlanApi):
    """One drill plan."""

    @extend_schema(
        operation_id="drill_plans_retrieve",
        summary="A drill plan",
        responses={200: DrillPlanSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        plan = self.found(selectors.drill_plan_get(plan_id=pk), pk)
        return Response(DrillPlanSerializer(plan).data)


@extend_schema(tags=[TAG])
class DrillPlanStartApi(DrillPlanApi):
    """Start a drill of this plan (commanders). The worker injects the fault once the run
    is recorded."""

    @extend_schema(
        operation_id="drill_plans_start",
        summary="Start a drill",
        request=None,
        responses={201: DrillRunDetailSerializer, **ITEM_WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        run = services.drill_start(plan_id=pk, actor=request.user)
        return _run_response(run.pk, status.HTTP_201_CREATED)


@extend_schema(tags=[TAG])
class DrillRunListApi(DrillRunApi):
    """Drill runs, newest first (at most 50), optionally for one runbook or target."""

    @extend_schema(
        operation_id="drill_runs_list",
        summary="List drill runs",
        parameters=[DrillRunQuerySerializer],
        responses={200: DrillRunSerializer(many=True), 400: E400, **READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = DrillRunQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        runs = selectors.drill_runs(**query.validated_data)
        return Response(DrillRunSerializer(runs, many=True).data)


@extend_schema(tags=[TAG])
class DrillRunDetailApi(DrillRunApi):
    """A drill run with its plan as it ran, its scorecard and its history. Their texts
    are in the request's language (Accept-Language or ?lang=), each with `<field>_i18n`."""

    @extend_schema(
        operation_id="drill_runs_retrieve",
        summary="A drill run",
        responses={200: DrillRunDetailSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        return _run_response(pk)


@extend_schema(tags=[TAG])
class DrillRunStopApi(DrillRunApi):
    """Stop a drill (commanders): the worker clears the fault, taking back only what the
    fault changed (never what people changed meanwhile), and the run ends aborted."""

    @extend_schema(
        operation_id="drill_runs_stop",
        summary="Stop a drill",
        request=DrillStopInputSerializer,
        responses={200: DrillRunDetailSerializer, 400: E400, **ITEM_WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        body = parse_body(DrillStopInputSerializer, request)
        services.drill_stop(run_id=pk, actor=request.user, reason=body["reason"])
        return _run_response(pk)
