"""REST API for an incident's silences in Alertmanager (see incidents/silences.py).

GET lists the incident's active and pending silences (viewer); POST silences one alert
or the whole group and DELETE expires one early (commander). When Alertmanager cannot
be asked the answer is 503 {"detail", "code": "alertmanager_unavailable"}; when it
refuses, 409 with code "alertmanager_refused"; either way nothing was changed.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from console.api_base import (
    ITEM_READ_ERRORS,
    WRITE_ERRORS,
    ConsoleApi,
    DomainErrorSerializer,
    ErrorSerializer,
    parse_body,
)
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents import permissions as perms
from incidents import selectors, services
from incidents.services.silences import (
    COMMENT_MAX_CHARS,
    DEFAULT_MINUTES,
    MAX_MINUTES,
    MIN_MINUTES,
)
from incidents.silences import UNAVAILABLE, IncidentSilence, incident_silences

TAG = "incidents"

E503 = OpenApiResponse(
    DomainErrorSerializer,
    description="Alertmanager could not be asked (down, refusing connections, or slower "
    "than ALERTMANAGER_TIMEOUT_SECONDS); `detail` names it and says why, and `code` is "
    "`alertmanager_unavailable`. Nothing was changed.",
)
E409_ALERTMANAGER = OpenApiResponse(
    DomainErrorSerializer,
    description="Refused: Alertmanager said no (`code` `alertmanager_refused`, `detail` "
    "has its words) or the silence has already expired (`unchanged`).",
)
SILENCE_ID = OpenApiParameter(
    "silence_id",
    OpenApiTypes.UUID,
    OpenApiParameter.PATH,
    description="Alertmanager's id of the silence.",
)


class MatcherSerializer(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.CharField(allow_blank=True)
    is_regex = serializers.BooleanField()
    is_equal = serializers.BooleanField(help_text="False for != and !~.")


class SilenceSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="Alertmanager's id of the silence.")
    state = serializers.ChoiceField(choices=["active", "pending", "expired"])
    matchers = MatcherSerializer(many=True)
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField(help_text="Until when notifications are held back.")
    created_by = serializers.CharField(allow_blank=True, help_text="Who silenced (createdBy).")
    comment = serializers.CharField(allow_blank=True)
    created_here = serializers.BooleanField(
        help_text="Created from this incident in the console (it is on the timeline)."
    )
    alerts_matched = serializers.IntegerField(
        help_text="How many of the incident's alerts (distinct label sets) it covers."
    )


class SilenceInputSerializer(serializers.Serializer):
    alert = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=2**63 - 1,
        help_text="Id of one of the incident's alerts: silence it by its exact labels. "
        "Omit (or null) to silence the whole group by the labels its alerts share.",
    )
    duration_minutes = serializers.IntegerField(
        default=DEFAULT_MINUTES, min_value=MIN_MINUTES, max_value=MAX_MINUTES
    )
    comment = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=COMMENT_MAX_CHARS,
        help_text='Default: "#12 <title> - silenced from the console by <you>".',
    )


def _data(item: IncidentSilence) -> dict:
    s = item.silence
    return SilenceSerializer(
        {
            "id": s.id,
            "state": s.state,
            "matchers": [
                {"name": m.name, "value": m.value, "is_regex": m.is_regex, "is_equal": m.is_equal}
                for m in s.matchers
            ],
            "starts_at": s.starts_at,
            "ends_at": s.ends_at,
            "created_by": s.created_by,
            "comment": s.comment,
            "created_here": item.created_here,
            "alerts_matched": item.alerts_matched,
        }
    ).data


class _SilenceApi(ConsoleApi):
    noun = "incident"
    # Alertmanager down is not the client's fault nor a state of the incident: 503. A
    # body naming another incident's alert, or a group with no common label: 400.
    domain_error_status = {UNAVAILABLE: 503, "invalid": 400}


@extend_schema(tags=[TAG])
class IncidentSilencesApi(_SilenceApi):
    """The incident's silences in Alertmanager (GET), or a new one (POST)."""

    pagination_class = None

    def get_permissions(self):
        perm = perms.SILENCE if self.request.method == "POST" else perms.VIEW
        return [HasConsoleRole(), require_perm(perm)()]

    @extend_schema(
        operation_id="incidents_silences_list",
        summary="The incident's active and pending silences in Alertmanager",
        description="Silences created from this incident and any other whose matchers "
        "match one of its alerts, the soonest to end first.",
        responses={200: SilenceSerializer(many=True), 503: E503, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        selectors.incident_get(incident_id=pk)  # 404, not an empty list
        return Response([_data(item) for item in incident_silences(incident_id=pk)])

    @extend_schema(
        operation_id="incidents_silences_create",
        summary="Silence one alert or the whole group in Alertmanager (commander)",
        request=SilenceInputSerializer,
        responses={201: SilenceSerializer, **WRITE_ERRORS, 409: E409_ALERTMANAGER, 503: E503},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(SilenceInputSerializer, request)
        item = services.incident_silence_create(
            incident_id=pk,
            actor=request.user,
            alert_id=data.get("alert"),
            duration_minutes=data["duration_minutes"],
            comment=data["comment"],
        )
        return Response(_data(item), status=status.HTTP_201_CREATED)


@extend_schema(tags=[TAG])
class IncidentSilenceApi(_SilenceApi):
    """One of the incident's silences."""

    permission_classes = [HasConsoleRole, require_perm(perms.SILENCE)]

    @extend_schema(
        operation_id="incidents_silences_expire",
        summary="Expire one of the incident's silences now (commander)",
        parameters=[SILENCE_ID],
        responses={
            200: OpenApiResponse(SilenceSerializer, description="The silence, now expired."),
            **ITEM_READ_ERRORS,
            404: OpenApiResponse(
                ErrorSerializer,
                description="No incident with this id, or the silence is not one of its "
                "silences (Alertmanager has no such silence, or it covers none of the "
                "incident's alerts).",
            ),
            409: E409_ALERTMANAGER,
            503: E503,
        },
    )
    def delete(self, request: AuthedApiRequest, pk: int, silence_id: str):
        item = services.incident_silence_expire(
            incident_id=pk, actor=request.user, silence_id=str(silence_id)
        )
        return Response(_data(item))
