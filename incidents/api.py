"""REST API for incidents: thin views over the selectors and services.

Each view parses its input, calls one service or selector, and renders the result.
Authentication is a session or `Authorization: Token <key>`; every view needs a console
role (settings REST_FRAMEWORK). Whether a role may make a change is decided by the
services (they raise PermissionDenied -> 403); the view-level permission classes only
say the same thing earlier, before the body is looked at. A refused change
(DomainError) answers 409 {"detail", "code"}, an unknown incident 404 {"detail"}
(console/api/errors.py).
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from console.api.base import (
    E400,
    ITEM_READ_ERRORS,
    ITEM_WRITE_ERRORS,
    LIST_ERRORS,
    WRITE_ERRORS,
    ConsoleApi,
    DomainErrorSerializer,
    parse_body,
)
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents import permissions as perms
from incidents import selectors, services
from incidents.paging import CappedPageNumberPagination
from incidents.selectors import IncidentFilters
from incidents.serializers import (
    CommanderInputSerializer,
    EndingInputSerializer,
    IncidentDetailSerializer,
    IncidentListQuerySerializer,
    IncidentSerializer,
    NoteInputSerializer,
    ReopenInputSerializer,
    ResolveInputSerializer,
    TimelineEventSerializer,
    TimelineQuerySerializer,
)

TAG = "incidents"


def _detail_response(request: AuthedApiRequest, incident_id: int) -> Response:
    incident = selectors.incident_get(incident_id=incident_id)
    context = {"request": request, "alerts": selectors.incident_alerts(incident_id=incident.pk)}
    return Response(IncidentDetailSerializer(incident, context=context).data)


class IncidentApi(ConsoleApi):
    noun = "incident"


# --- reads ------------------------------------------------------------------------------
@extend_schema(tags=[TAG])
class IncidentListApi(IncidentApi):
    """Incidents matching the filters, paginated (`?page=`). `count` is exact up to
    10,000 (200 with `q`); past that `count_capped` is true and the pages reach the
    newest that many."""

    pagination_class = CappedPageNumberPagination

    @extend_schema(
        operation_id="incidents_list",
        summary="List incidents, newest first",
        parameters=[IncidentListQuerySerializer],
        responses={200: IncidentSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = IncidentListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        incidents = selectors.incident_list(
            filters=IncidentFilters.from_params(query.validated_data)
        )
        page = self.paginate_queryset(incidents)
        data = IncidentSerializer(page, many=True, context={"request": request}).data
        return self.get_paginated_response(data)


@extend_schema(tags=[TAG])
class IncidentDetailApi(IncidentApi):
    """The incident, its Alertmanager group labels and its alerts (firing first)."""

    @extend_schema(
        operation_id="incidents_retrieve",
        summary="One incident with its alerts",
        responses={200: IncidentDetailSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        return _detail_response(request, pk)


@extend_schema(tags=[TAG])
class IncidentTimelineApi(IncidentApi):
    """What happened, oldest first: alerts, status changes, notes, commanders.

    Poll with `?after=<id of the last event you have>` to get only newer events."""

    @extend_schema(
        operation_id="incidents_timeline",
        summary="The incident's timeline, oldest first",
        parameters=[TimelineQuerySerializer],
        responses={200: TimelineEventSerializer(many=True), 400: E400, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        query = TimelineQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        selectors.incident_get(incident_id=pk)  # 404 for a missing incident, not an empty list
        events = selectors.incident_timeline(
            incident_id=pk, after_id=query.validated_data.get("after")
        )
        page = self.paginate_queryset(events)
        return self.get_paginated_response(TimelineEventSerializer(page, many=True).data)


# --- changes ----------------------------------------------------------------------------
def _change_schema(
    operation_id: str,
    summary: str,
    request,
    *,
    status_code: int = 200,
    response=IncidentDetailSerializer,
    errors=WRITE_ERRORS,
    **kw,
):
    return extend_schema(
        operation_id=operation_id,
        summary=summary,
        request=request,
        responses={status_code: response, **errors},
        **kw,
    )


@extend_schema(tags=[TAG])
class IncidentAcknowledgeApi(IncidentApi):
    """Someone is on it. No body. When nobody commands the incident, the person who
    acknowledges it takes command. Answers the incident."""

    permission_classes = [HasConsoleRole, require_perm(perms.ACKNOWLEDGE)]

    @_change_schema(
        "incidents_acknowledge",
        "Acknowledge: someone is on it (responder)",
        None,
        errors=ITEM_WRITE_ERRORS,
    )
    def post(self, request: AuthedApiRequest, pk: int):
        services.incident_acknowledge(incident_id=pk, actor=request.user)
        return _detail_response(request, pk)


# Mitigate and resolve while alerts still fire: refused until confirmed with a reason.
E409_FIRING = OpenApiResponse(
    DomainErrorSerializer,
    description="Refused in the incident's current state. Code `alerts_firing`: some of "
    "its alerts still fire (`detail` names them); to go ahead, send the same call with "
    '`{"confirm": true, "reason": "..."}`. Other codes: the move is not allowed now.',
)
ENDING_ERRORS = {**WRITE_ERRORS, 409: E409_FIRING}
E409_RESOLVE = OpenApiResponse(
    DomainErrorSerializer,
    description="Refused in the incident's current state. Code `alerts_firing`: some of "
    "its alerts still fire (`detail` names them); to go ahead, send the same call with "
    '`{"confirm": true, "reason": "..."}`. Code `no_commander`: the incident is SEV1 or '
    "SEV2 and nobody is in command; take command first, or send the same call with "
    '`"confirm_no_commander": true` (the timeline records it). Other codes: the move is '
    "not allowed now.",
)
RESOLVE_ERRORS = {**WRITE_ERRORS, 409: E409_RESOLVE}


@extend_schema(tags=[TAG])
class IncidentMitigateApi(IncidentApi):
    """Impact has stopped. While alerts still fire it needs `confirm` and a `reason` (409
    `alerts_firing` otherwise). Answers the incident."""

    permission_classes = [HasConsoleRole, require_perm(perms.MITIGATE)]

    @_change_schema(
        "incidents_mitigate",
        "Mark mitigated: impact has stopped (responder)",
        EndingInputSerializer,
        errors=ENDING_ERRORS,
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(EndingInputSerializer, request)
        services.incident_mitigate(
            incident_id=pk, actor=request.user, reason=data["reason"], confirm=data["confirm"]
        )
        return _detail_response(request, pk)


@extend_schema(tags=[TAG])
class IncidentResolveApi(IncidentApi):
    """The incident is over. While alerts still fire it needs `confirm` and a `reason`
    (409 `alerts_firing` otherwise); a SEV1 or SEV2 nobody commands needs
    `confirm_no_commander` (409 `no_commander` otherwise). Answers the incident."""

    permission_classes = [HasConsoleRole, require_perm(perms.RESOLVE)]

    @_change_schema(
        "incidents_resolve", "Resolve (commander)", ResolveInputSerializer, errors=RESOLVE_ERRORS
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(ResolveInputSerializer, request)
        services.incident_resolve(
            incident_id=pk,
            actor=request.user,
            reason=data["reason"],
            confirm=data["confirm"],
            confirm_no_commander=data["confirm_no_commander"],
        )
        return _detail_response(request, pk)


@extend_schema(tags=[TAG])
class IncidentReopenApi(IncidentApi):
    """Back to triggered, with a reason; refused while another incident is open for the
    same alert group. Answers the incident."""

    permission_classes = [HasConsoleRole, require_perm(perms.REOPEN)]

    @_change_schema(
        "incidents_reopen", "Reopen a resolved incident (commander)", ReopenInputSerializer
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(ReopenInputSerializer, request)
        services.incident_reopen(incident_id=pk, actor=request.user, reason=data["reason"])
        return _detail_response(request, pk)


@extend_schema(tags=[TAG])
class IncidentNoteApi(IncidentApi):
    """Append a note to the timeline. Answers the new timeline event."""

    permission_classes = [HasConsoleRole, require_perm(perms.ADD_NOTE)]

    @_change_schema(
        "incidents_note_add",
        "Add a note to the timeline (responder)",
        NoteInputSerializer,
        status_code=201,
        response=TimelineEventSerializer,
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(NoteInputSerializer, request)
        event = services.incident_note_add(incident_id=pk, actor=request.user, text=data["text"])
        return Response(TimelineEventSerializer(event).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=[TAG])
class IncidentCommanderApi(IncidentApi):
    """A responder may name themselves when nobody commands the incident; assigning
    someone else, taking over, or clearing it (null) needs the commander role.
    Answers the incident."""

    # Who may do what depends on the incident (a free seat or not), so only the service
    # decides; there is no view-level permission beyond holding a console role.
    @_change_schema(
        "incidents_commander_set",
        "Take command, assign the commander, or clear it",
        CommanderInputSerializer,
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(CommanderInputSerializer, request)
        commander = data["commander"]
        services.incident_commander_set(
            incident_id=pk,
            actor=request.user,
            commander_id=commander.pk if commander is not None else None,
        )
        return _detail_response(request, pk)


# --- the Alertmanager webhook in the schema ---------------------------------------------
ALERTMANAGER_WEBHOOK_PATH = "/api/v1/alerts/alertmanager"

_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_INT_LIST = {"type": "array", "items": {"type": "integer"}}
_WEBHOOK_SCHEMAS = {
    "AlertmanagerAlert": {
        "type": "object",
        "required": ["status", "labels", "startsAt"],
        "properties": {
            "status": {"type": "string", "enum": ["firing", "resolved"]},
            "labels": {**_STRING_MAP, "description": "Must not be empty."},
            "annotations": _STRING_MAP,
            "startsAt": {"type": "string", "format": "date-time"},
            "endsAt": {
                "type": "string",
                "format": "date-time",
                "description": "0001-01-01T00:00:00Z (Go's zero time) while firing.",
            },
            "generatorURL": {"type": "string"},
            "fingerprint": {
                "type": "string",
                "description": "Hex digits; computed from the labels when absent "
                "(Alertmanager < 0.19).",
            },
        },
    },
    "AlertmanagerWebhook": {
        "type": "object",
        "description": "Alertmanager webhook body, version 4. Unknown keys are kept in the "
        "receipt log and otherwise ignored.",
        "required": ["alerts"],
        "properties": {
            "version": {"type": "string", "enum": ["4"]},
            "groupKey": {"type": "string"},
            "truncatedAlerts": {"type": "integer", "minimum": 0},
            "status": {"type": "string", "enum": ["firing", "resolved"]},
            "receiver": {"type": "string"},
            "groupLabels": _STRING_MAP,
            "commonLabels": _STRING_MAP,
            "commonAnnotations": _STRING_MAP,
            "externalURL": {"type": "string"},
            "alerts": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/AlertmanagerAlert"},
            },
        },
    },
    "AlertmanagerAccepted": {
        "type": "object",
        "required": ["received", "incidents", "opened", "reopened", "mitigated", "receipt"],
        "properties": {
            "received": {"type": "integer", "description": "Alerts in the body."},
            "incidents": {**_INT_LIST, "description": "Ids of the incidents touched."},
            "opened": _INT_LIST,
            "reopened": _INT_LIST,
            "mitigated": _INT_LIST,
            "receipt": {"type": "integer", "description": "Id of the receipt log entry."},
        },
    },
    "AlertmanagerRefused": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {"type": "string"},
            "field": {"type": "string", "description": "The bad field, e.g. alerts[3].startsAt"},
            "receipt": {"type": "integer", "description": "Dead-letter receipt id."},
        },
    },
}


def _json_response(description: str, schema_name: str) -> dict:
    ref = {"$ref": f"#/components/schemas/{schema_name}"}
    return {"description": description, "content": {"application/json": {"schema": ref}}}


def schema_add_alertmanager_webhook(result, generator, request, public, **kwargs):
    """drf-spectacular postprocessing hook: document the Alertmanager webhook, a plain
    Django view (incidents/ingest/receive.py) that schema generation cannot see."""
    components = result.setdefault("components", {})
    components.setdefault("schemas", {}).update(_WEBHOOK_SCHEMAS)
    components.setdefault("securitySchemes", {})["alertmanagerBearer"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "The ALERTMANAGER_TOKEN setting (http_config.authorization in "
        "Alertmanager's webhook_config).",
    }
    refused = "AlertmanagerRefused"
    result.setdefault("paths", {})[ALERTMANAGER_WEBHOOK_PATH] = {
        "post": {
            "operationId": "alerts_alertmanager_receive",
            "summary": "Receive an Alertmanager notification",
            "description": "Stores the body, upserts the alerts and opens, updates or "
            "mitigates incidents, in one transaction. Idempotent: a repeated delivery "
            "changes nothing. Alertmanager retries 5xx answers only.",
            "tags": ["alerts"],
            "security": [{"alertmanagerBearer": []}],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {"$ref": "#/components/schemas/AlertmanagerWebhook"}
                    }
                },
            },
            "responses": {
                "200": _json_response("Stored.", "AlertmanagerAccepted"),
                "400": _json_response(
                    "Not a usable webhook v4 body; `field` names the bad field. The body is "
                    "kept in the dead-letter log.",
                    refused,
                ),
                "401": _json_response("Missing or wrong bearer token.", refused),
                "405": _json_response("Only POST is allowed.", refused),
                "413": _json_response("Body larger than WEBHOOK_MAX_BYTES.", refused),
                "503": _json_response(
                    "Database unavailable; Alertmanager retries, so nothing is lost.", refused
                ),
            },
        }
    }
    return result
