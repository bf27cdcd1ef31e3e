"""REST API: declare an incident by hand (incidents/services/declare.py).

The body is checked with the service's own rules, so a bad field answers 400 naming it,
{"<field>": ["<message>"]}, as every other body of the API.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from console.api.base import E400, READ_ERRORS, ConsoleApi, parse_body
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents import selectors, services
from incidents.models import Severity
from incidents.serializers import IncidentDetailSerializer
from incidents.services.declare import (
    DECLARE,
    LABEL_VALUE_MAX_CHARS,
    LABELS_MAX,
    SUMMARY_MAX_CHARS,
    TITLE_MAX_CHARS,
    DeclareInvalid,
    declare_labels_clean,
    declare_namespace_clean,
)

TAG = "incidents"


class _SeverityField(serializers.ChoiceField):
    def to_internal_value(self, data):
        return super().to_internal_value(str(data).strip().upper())


class DeclareInputSerializer(serializers.Serializer):
    title = serializers.CharField(
        max_length=TITLE_MAX_CHARS, help_text="What is wrong, in a line (1 to 200 characters)."
    )
    severity = _SeverityField(choices=Severity.choices)
    namespace = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=63,
        help_text="The Kubernetes namespace it concerns (a DNS label), if one.",
    )
    labels = serializers.DictField(
        child=serializers.CharField(max_length=LABEL_VALUE_MAX_CHARS),
        required=False,
        default=dict,
        help_text=f"At most {LABELS_MAX} labels, as an alert's (name: text). `team` names "
        "the owning team outright (the pager pages its escalation policy); `lws`, `model` "
        "and `node_pool` match the teams' ownership claims.",
    )
    summary = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=SUMMARY_MAX_CHARS,
        help_text="What is known so far; the first note on the timeline.",
    )

    def validate_namespace(self, value: str) -> str:
        return _checked(declare_namespace_clean, value)

    def validate_labels(self, value: dict) -> dict[str, str]:
        return _checked(declare_labels_clean, value)


def _checked(clean, value):
    try:
        return clean(value)
    except DeclareInvalid as exc:
        raise serializers.ValidationError(str(exc)) from exc


@extend_schema(tags=[TAG])
class IncidentDeclareApi(ConsoleApi):
    """Open an incident by hand (no alert): triggered at once, its timeline opened by you
    (the `source` says from where), its summary the first note. The pager routes and pages
    it as it does an alert-opened incident. Answers the incident (201)."""

    noun = "incident"
    permission_classes = [HasConsoleRole, require_perm(DECLARE)]
    domain_error_status = {"invalid": 400}

    @extend_schema(
        operation_id="incidents_declare",
        summary="Declare an incident (responder)",
        request=DeclareInputSerializer,
        responses={201: IncidentDetailSerializer, 400: E400, **READ_ERRORS},
    )
    def post(self, request: AuthedApiRequest):
        data = parse_body(DeclareInputSerializer, request)
        try:
            incident = services.incident_declare(actor=request.user, **data)
        except DeclareInvalid as exc:  # the service's own check, named like the serializer's
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        found = selectors.incident_get(incident_id=incident.pk)
        context = {"request": request, "alerts": selectors.incident_alerts(incident_id=found.pk)}
        body = IncidentDetailSerializer(found, context=context).data
        return Response(body, status=status.HTTP_201_CREATED)
