"""REST API of retention's archive: the batches, the archived incidents, archiving now
(queued) and restoring (named incidents at once, a whole batch queued).

Reading needs incidents.view_archivebatch, archiving incidents.archive_incidents and
restoring incidents.restore_incidents (the admin role holds all three); the services
check the last two again. A refusal (DomainError) answers as everywhere in the API
(console/api/errors.py): 404 for an unknown batch, 409 otherwise.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from console.api.base import (
    E400,
    LIST_ERRORS,
    READ_ERRORS,
    WRITE_ERRORS,
    ConsoleApi,
    DomainErrorSerializer,
)
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents.archive import requests, selectors
from incidents.archive.serializers import (
    ArchiveBatchSerializer,
    ArchivedIncidentSerializer,
    ArchivedQuerySerializer,
    ArchiveRunInputSerializer,
    ArchiveRunQueuedSerializer,
    RestoreInputSerializer,
    RestoreQueuedSerializer,
    RestoreResultSerializer,
)
from incidents.archive.services import ARCHIVE_PERM, RESTORE_PERM, incidents_restore
from incidents.models import ArchiveMethod
from incidents.paging import CappedPageNumberPagination

TAG = "archive"
VIEW_ARCHIVE = "incidents.view_archivebatch"


class ArchiveApi(ConsoleApi):
    noun = "archive batch"
    permission_classes = [HasConsoleRole, require_perm(VIEW_ARCHIVE)]
    pagination_class = CappedPageNumberPagination
    # The services' check of the number of days: the body's fault, so 400.
    domain_error_status = {"invalid": 400}


@extend_schema(tags=[TAG])
class ArchiveBatchListApi(ArchiveApi):
    """Every archiving run, newest first: when, by whom, under which rule, what it moved
    and how much of it was restored since."""

    @extend_schema(
        operation_id="archive_batches_list",
        summary="List archive batches, newest first",
        responses={200: ArchiveBatchSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        page = self.paginate_queryset(selectors.archive_batches())
        return self.get_paginated_response(ArchiveBatchSerializer(page, many=True).data)


@extend_schema(tags=[TAG])
class ArchivedIncidentListApi(ArchiveApi):
    """The incidents whose alerts and timeline are archived now, newest archive first. A
    restored incident is no longer listed."""

    @extend_schema(
        operation_id="archive_incidents_list",
        summary="List archived incidents (search by id or title)",
        parameters=[ArchivedQuerySerializer],
        responses={200: ArchivedIncidentSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = ArchivedQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = selectors.archived_incidents(
            batch_id=query.validated_data.get("batch"), q=query.validated_data.get("q", "")
        )
        page = self.paginate_queryset(found)
        data = ArchivedIncidentSerializer(page, many=True, context={"request": request}).data
        return self.get_paginated_response(data)


@extend_schema(tags=[TAG])
class ArchiveRunApi(ArchiveApi):
    """Archive the incidents resolved more than `older_than_days` ago, now. Queued on the
    worker (a run can move hundreds of thousands of incidents): 202 names the task; the
    batch appears in the batch list when the run starts. Incidents with a postmortem,
    action items, action runs or drills, or with an alert still firing, are left alone."""

    permission_classes = [HasConsoleRole, require_perm(ARCHIVE_PERM)]

    @extend_schema(
        operation_id="archive_run",
        summary="Archive resolved incidents now (admin; queued)",
        request=ArchiveRunInputSerializer,
        responses={202: ArchiveRunQueuedSerializer, 400: E400, **READ_ERRORS},
    )
    def post(self, request: AuthedApiRequest):
        body = ArchiveRunInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        days = body.validated_data["older_than_days"]
        queued = requests.incidents_archive_request(
            older_than_days=days, actor=request.user, method=ArchiveMethod.API
        )
        answer = {"task": queued.task, "task_id": queued.task_id, "older_than_days": days}
        return Response(ArchiveRunQueuedSerializer(answer).data, status=status.HTTP_202_ACCEPTED)


E409_RESTORE = OpenApiResponse(
    DomainErrorSerializer,
    description="Nothing to restore. Code `not_archived`: some of the named incidents are "
    "not archived (`detail` names them; none was restored). Code `unchanged`: every "
    "incident of the batch is restored already.",
)


@extend_schema(tags=[TAG])
class ArchiveRestoreApi(ArchiveApi):
    """Bring archived incidents back whole: `{"incidents": [ids]}` at once (200 with what
    came back; 409 code `not_archived` naming any that are not archived), or
    `{"batch": id}` for every incident the batch still holds, queued (202)."""

    permission_classes = [HasConsoleRole, require_perm(RESTORE_PERM)]

    @extend_schema(
        operation_id="archive_restore",
        summary="Restore archived incidents (admin)",
        request=RestoreInputSerializer,
        responses={
            200: RestoreResultSerializer,
            202: RestoreQueuedSerializer,
            **WRITE_ERRORS,
            409: E409_RESTORE,
        },
    )
    def post(self, request: AuthedApiRequest):
        body = RestoreInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        batch_id = body.validated_data.get("batch")
        if batch_id is not None:
            queued = requests.incidents_restore_request(
                batch_id=batch_id, actor=request.user, method=ArchiveMethod.API
            )
            answer = {"task": queued.task, "task_id": queued.task_id, "batch": batch_id}
            return Response(RestoreQueuedSerializer(answer).data, status=status.HTTP_202_ACCEPTED)
        result = incidents_restore(
            actor=request.user,
            method=ArchiveMethod.API,
            incident_ids=body.validated_data["incidents"],
        )
        return Response(RestoreResultSerializer(result).data)
