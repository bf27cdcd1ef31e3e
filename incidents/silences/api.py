"""REST API for an incident's silences in Alertmanager (see incidents/silences/client.py).

GET lists the incident's active and pending silences (viewer); POST silences one alert
or the whole group and DELETE expires one early (commander). When Alertmanager cannot
be asked the answer is 503 {"detail", "code": "alertmanager_unavailable"}; when it
refuses, 409 with code "alertmanager_refused"; either way nothing was changed.

POST answers the list of silences made (a group silence may take several, see
incidents/silences/scope.py), or 409 "covers_other_incidents" naming the open incidents
it would also silence. DELETE of a silence not made from this incident by the console,
or broader than it, answers 409 "confirmation_required" with the silence (matchers,
createdBy, comment) until it is asked again with `?confirm=true`.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from console.api.base import (
    E400,
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
from incidents.silences.client import UNAVAILABLE, IncidentSilence, Silence, incident_silences
from incidents.silences.scope import ConfirmationRequired, CoversOtherIncidents
from incidents.silences.services import (
    COMMENT_MAX_CHARS,
    DEFAULT_MINUTES,
    MAX_MINUTES,
    MIN_MINUTES,
)

TAG = "incidents"

E503 = OpenApiResponse(
    DomainErrorSerializer,
    description="Alertmanager could not be asked (down, refusing connections, or slower "
    "than ALERTMANAGER_TIMEOUT_SECONDS); `detail` names it and says why, and `code` is "
    "`alertmanager_unavailable`. Nothing was changed.",
)
CONFIRM = OpenApiParameter(
    "confirm",
    OpenApiTypes.BOOL,
    OpenApiParameter.QUERY,
    required=False,
    description="true: expire even a silence that needs a confirmation (one not created "
    "from this incident by the console, or one matching alerts outside it).",
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


class AlertmanagerSilenceSerializer(serializers.Serializer):
    # No `state` here: a second component with the same choices trips drf-spectacular's
    # enum naming; the silence asking for a confirmation is active anyway.
    id = serializers.CharField(help_text="Alertmanager's id of the silence.")
    matchers = MatcherSerializer(many=True)
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField(help_text="Until when notifications are held back.")
    created_by = serializers.CharField(allow_blank=True, help_text="Who silenced (createdBy).")
    comment = serializers.CharField(allow_blank=True)


class SilenceSerializer(AlertmanagerSilenceSerializer):
    state = serializers.ChoiceField(choices=["active", "pending", "expired"])
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


class IncidentRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()


class SilenceCreateRefusalSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why, for a person to read.")
    code = serializers.CharField(
        help_text="covers_other_incidents, alertmanager_refused or another refusal code."
    )
    incidents = IncidentRefSerializer(
        many=True,
        required=False,
        help_text="covers_other_incidents: the other open incidents (up to 5) whose "
        "firing alerts the silence would also match.",
    )


class SilenceExpireRefusalSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why, for a person to read.")
    code = serializers.CharField(
        help_text="confirmation_required, unchanged, alertmanager_refused or another code."
    )
    silence = AlertmanagerSilenceSerializer(
        required=False,
        help_text="confirmation_required: the silence, with its matchers and author.",
    )
    reasons = serializers.ListField(
        child=serializers.ChoiceField(choices=["not_created_here", "broader_than_incident"]),
        required=False,
        help_text="confirmation_required: why it needs the confirmation.",
    )


class ExpireQuerySerializer(serializers.Serializer):
    confirm = serializers.BooleanField(required=False, default=False)


def _silence_data(s: Silence) -> dict:
    return {
        "id": s.id,
        "matchers": [
            {"name": m.name, "value": m.value, "is_regex": m.is_regex, "is_equal": m.is_equal}
            for m in s.matchers
        ],
        "starts_at": s.starts_at,
        "ends_at": s.ends_at,
        "created_by": s.created_by,
        "comment": s.comment,
    }


def _data(item: IncidentSilence) -> dict:
    return SilenceSerializer(
        {
            **_silence_data(item.silence),
            "state": item.silence.state,
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
        description="One alert: one silence, its exact labels. The group: by alertname "
        "and namespace plus the labels all its alerts share, one silence per set of alert "
        "names firing in the same namespaces, so that no alert outside the incident "
        "matches. Refused (409 `covers_other_incidents`) when a silence would also match "
        "a firing alert of another open incident.",
        responses={
            201: OpenApiResponse(
                SilenceSerializer(many=True), description="The silences made (one or more)."
            ),
            **WRITE_ERRORS,
            409: OpenApiResponse(
                SilenceCreateRefusalSerializer,
                description="Refused: the silence would also silence other open incidents' "
                "firing alerts (`covers_other_incidents`, `incidents` names them), or "
                "Alertmanager said no (`alertmanager_refused`). Nothing was created.",
            ),
            503: E503,
        },
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(SilenceInputSerializer, request)
        try:
            made = services.incident_silence_create(
                incident_id=pk,
                actor=request.user,
                alert_id=data.get("alert"),
                duration_minutes=data["duration_minutes"],
                comment=data["comment"],
            )
        except CoversOtherIncidents as exc:
            others = [{"id": other, "title": title} for other, title in exc.others]
            body = {"detail": str(exc), "code": exc.code, "incidents": others}
            return Response(body, status=status.HTTP_409_CONFLICT)
        return Response([_data(item) for item in made], status=status.HTTP_201_CREATED)


@extend_schema(tags=[TAG])
class IncidentSilenceApi(_SilenceApi):
    """One of the incident's silences."""

    permission_classes = [HasConsoleRole, require_perm(perms.SILENCE)]

    @extend_schema(
        operation_id="incidents_silences_expire",
        summary="Expire one of the incident's silences now (commander)",
        description="A silence the console did not create from this incident (not on its "
        "timeline, or its createdBy or comment changed since), or one whose matchers reach "
        "beyond the incident's alerts, is expired only with `?confirm=true`; without it "
        "the answer is 409 `confirmation_required` showing the silence's matchers, author "
        "and comment. The timeline entry records the confirmation.",
        parameters=[SILENCE_ID, CONFIRM],
        responses={
            200: OpenApiResponse(SilenceSerializer, description="The silence, now expired."),
            400: E400,
            **ITEM_READ_ERRORS,
            404: OpenApiResponse(
                ErrorSerializer,
                description="No incident with this id, or the silence is not one of its "
                "silences (Alertmanager has no such silence, or it covers none of the "
                "incident's alerts).",
            ),
            409: OpenApiResponse(
                SilenceExpireRefusalSerializer,
                description="Not expired: it needs `?confirm=true` "
                "(`confirmation_required`, with `silence` and `reasons`), it has already "
                "expired (`unchanged`), or Alertmanager said no (`alertmanager_refused`).",
            ),
            503: E503,
        },
    )
    def delete(self, request: AuthedApiRequest, pk: int, silence_id: str):
        query = ExpireQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            item = services.incident_silence_expire(
                incident_id=pk,
                actor=request.user,
                silence_id=str(silence_id),
                confirm=query.validated_data["confirm"],
            )
        except ConfirmationRequired as exc:
            body = {
                "detail": str(exc),
                "code": exc.code,
                "silence": AlertmanagerSilenceSerializer(_silence_data(exc.silence)).data,
                "reasons": exc.reasons,
            }
            return Response(body, status=status.HTTP_409_CONFLICT)
        return Response(_data(item))
