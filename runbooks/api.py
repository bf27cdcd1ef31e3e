"""REST API of the runbooks app: live triage of an incident."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console.api.base import ITEM_READ_ERRORS, ConsoleApi
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents import selectors
from incidents.permissions import VIEW
from incidents.related.selectors import incident_lead
from runbooks.auto_triage.queue import auto_triage_seen
from runbooks.recommendations import recommended_actions
from runbooks.serializers import TriageSerializer, triage_data
from runbooks.triage import incident_alerts_firing_first, incident_triage


@extend_schema(tags=["runbooks"])
class IncidentTriageApi(ConsoleApi):
    """The incident's runbook checks, run against Prometheus now, and the branch of the
    decision tree they point to. Prometheus being down is not an error of this call: the
    checks say "error" and `prometheus.error` says why. Answers are cached for
    TRIAGE_CACHE_SECONDS.

    `decision.recommended` lists the branch's actions with their parameters filled from
    the alert labels as the incident page's button fills them, and whether approval is
    needed: POST `{"kind", "params", "idempotency_key"}` to
    /api/v1/incidents/{id}/actions/ to request one, as the button does."""

    noun = "incident"
    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="incidents_triage",
        summary="Live triage of an incident",
        responses={200: TriageSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        incident = selectors.incident_get(incident_id=pk)
        alerts = incident_alerts_firing_first(incident)  # one query serves both reads
        result = incident_triage(incident=incident, alerts=alerts)
        auto_triage_seen(incident=incident, result=result)  # another branch: post it
        recommended = recommended_actions(incident=incident, result=result, alerts=alerts)
        data = {**triage_data(result, recommended), "lead": None}
        lead = incident_lead(incident=incident)  # a related incident: the lead's runbook leads
        if lead is not None and lead.is_open:
            url = reverse("runbooks_api:incident-triage", args=[lead.pk])
            data["lead"] = {"incident": lead.pk, "runbook": lead.runbook, "triage": url}
        return Response(TriageSerializer(data).data)
