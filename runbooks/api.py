"""REST API of the runbooks app: live triage of an incident."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from console.permissions import HasConsoleRole, require_perm
from incidents import selectors
from incidents.api import ITEM_READ_ERRORS
from runbooks.serializers import TriageSerializer, triage_data
from runbooks.triage import incident_triage

ID_PARAM = OpenApiParameter("id", int, OpenApiParameter.PATH, description="Incident id.")


@extend_schema(tags=["runbooks"], parameters=[ID_PARAM])
class IncidentTriageApi(APIView):
    """The incident's runbook checks, run against Prometheus now, and the branch of the
    decision tree they point to. Prometheus being down is not an error of this call: the
    checks say "error" and `prometheus.error` says why. Answers are cached for
    TRIAGE_CACHE_SECONDS."""

    permission_classes = [HasConsoleRole, require_perm("incidents.view_incident")]

    @extend_schema(
        operation_id="incidents_triage",
        summary="Live triage of an incident",
        responses={200: TriageSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request, pk: int):
        incident = selectors.incident_get(incident_id=pk)
        if incident is None:
            raise NotFound(f"Incident #{pk} does not exist.")
        result = incident_triage(incident=incident)
        return Response(TriageSerializer(triage_data(result)).data)
