"""REST API of related incidents: merge one into its lead, or unlink it. Who may: the
responder role (acknowledge). The incident's detail lists its lead (`part_of`) and the
lead's related incidents (`related`)."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console.api.base import ITEM_WRITE_ERRORS, ConsoleApi
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents import permissions as perms
from incidents import selectors
from incidents.related.services import incident_related_merge, incident_related_unlink
from incidents.serializers import IncidentDetailSerializer

TAG = "incidents"


def _detail(request: AuthedApiRequest, incident_id: int) -> Response:
    incident = selectors.incident_get(incident_id=incident_id)
    context = {"request": request, "alerts": selectors.incident_alerts(incident_id=incident.pk)}
    return Response(IncidentDetailSerializer(incident, context=context).data)


@extend_schema(tags=[TAG])
class IncidentMergeApi(ConsoleApi):
    """Merge this related incident into its lead: its alerts, and Alertmanager's later
    notifications of them, go to the lead; it is resolved as "merged into #N"; both
    timelines say so. No body. Answers the lead. 409 `not_linked` when it is part of no
    incident, `merged` when already merged, `invalid_transition` when either is resolved."""

    noun = "incident"
    permission_classes = [HasConsoleRole, require_perm(perms.ACKNOWLEDGE)]

    @extend_schema(
        operation_id="incidents_merge",
        summary="Merge a related incident into its lead (responder)",
        request=None,
        responses={200: IncidentDetailSerializer, **ITEM_WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        lead = incident_related_merge(incident_id=pk, actor=request.user)
        return _detail(request, lead.pk)


@extend_schema(tags=[TAG])
class IncidentUnlinkApi(ConsoleApi):
    """Unlink this incident from the incident it is part of; each goes on alone and both
    timelines say so. No body. Answers the incident. 409 `not_linked`, `merged`."""

    noun = "incident"
    permission_classes = [HasConsoleRole, require_perm(perms.ACKNOWLEDGE)]

    @extend_schema(
        operation_id="incidents_unlink",
        summary="Unlink a related incident from its lead (responder)",
        request=None,
        responses={200: IncidentDetailSerializer, **ITEM_WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        incident_related_unlink(incident_id=pk, actor=request.user)
        return _detail(request, pk)
