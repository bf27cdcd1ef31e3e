"""REST API of the runbooks app: live triage of an incident."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console.api_base import ITEM_READ_ERRORS, ConsoleApi
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents import selectors
from incidents.permissions import VIEW
from runbooks.serializers import TriageSerializer, triage_data
from runbooks.triage import incident_triage


@extend_schema(tags=["runbooks"])
class IncidentTriageApi(ConsoleApi):
    """The incident's runbook checks, run against Prometheus now, and the branch of the
    decision tree they point to. Prometheus being down is not an error of this call: the
    checks say "error" and `prometheus.error` says why. Answers are cached for
    TRIAGE_CACHE_SECONDS."""

    noun = "incident"
    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="incidents_triage",
        summary="Live triage of an incident",
        responses={200: TriageSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        result = incident_triage(incident=selectors.incident_get(incident_id=pk))
        return Response(TriageSerializer(triage_data(result)).data)
