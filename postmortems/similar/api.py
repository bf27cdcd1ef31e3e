"""REST API of similar past incidents: GET /api/v1/incidents/{id}/similar/ (the incident
page's panel as JSON)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from console.api.base import ITEM_READ_ERRORS, ConsoleApi
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents.permissions import VIEW
from incidents.selectors import incident_get
from postmortems.similar.selectors import Similar, SimilarIncidents, incident_similar
from postmortems.similar.texts import reason_api


class SimilarFixSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The action run.")
    kind = serializers.CharField()
    target = serializers.CharField()
    params = serializers.DictField(child=serializers.JSONField())
    finished_at = serializers.DateTimeField(allow_null=True)


class SimilarPostmortemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.CharField(help_text="draft, in_review or published.")


class SimilarItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.CharField(help_text="open or in_progress.")
    priority = serializers.CharField()
    owner = serializers.CharField(allow_null=True)
    due_date = serializers.DateField()
    overdue = serializers.BooleanField()


class SimilarIncidentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    severity = serializers.CharField()
    status = serializers.CharField()
    is_drill = serializers.BooleanField()
    is_demo = serializers.BooleanField(help_text="Demo history seeded by make run.")
    triggered_at = serializers.DateTimeField()
    resolved_at = serializers.DateTimeField(allow_null=True)
    duration_seconds = serializers.IntegerField(
        allow_null=True, help_text="Opened to resolved; null while not resolved."
    )
    reasons = serializers.ListField(
        child=serializers.CharField(),
        help_text='Why it is similar, in the request\'s language: "same runbook <slug>", '
        '"same LWS <namespace>/<lws>", "same node <node>" (the name as it is).',
    )
    reasons_i18n = serializers.ListField(
        child=serializers.JSONField(allow_null=True),
        help_text='Per reason, its message ids and parameters ([{"id", "params"}]: '
        "postmortems.similar.runbook, .lws or .node with `what`), or null for a reason "
        "of no known shape.",
    )
    fixes = SimilarFixSerializer(many=True, help_text="Its succeeded action runs.")
    postmortem = SimilarPostmortemSerializer(allow_null=True)
    open_action_items = SimilarItemSerializer(many=True)


class SimilarIncidentsSerializer(serializers.Serializer):
    incident = serializers.IntegerField()
    runbook = serializers.CharField(allow_blank=True, help_text='"" when no runbook matches.')
    lws = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="The [namespace, lws] pairs of the incident's alerts looked for.",
    )
    nodes = serializers.ListField(child=serializers.CharField())
    fix_not_done = serializers.BooleanField(
        help_text="A similar incident still has open action items: seen before, and the fix "
        "is not done."
    )
    similar = SimilarIncidentSerializer(many=True)


def _reasons(reasons: tuple[str, ...]) -> dict[str, list[Any]]:
    worded = [reason_api(r) for r in reasons]
    return {"reasons": [w for w, _ids in worded], "reasons_i18n": [ids for _w, ids in worded]}


def _item_data(s: Similar, today) -> dict[str, Any]:
    inc, pm = s.incident, s.postmortem
    return {
        "id": inc.pk,
        "title": inc.title,
        "severity": inc.severity,
        "status": inc.status,
        "is_drill": inc.is_drill,
        "is_demo": inc.is_demo,
        "triggered_at": inc.triggered_at,
        "resolved_at": inc.resolved_at,
        "duration_seconds": int(s.duration.total_seconds()) if s.duration else None,
        **_reasons(s.reasons),
        "fixes": [
            {
                "id": r.pk,
                "kind": r.kind,
                "target": r.target,
                "params": r.params,
                "finished_at": r.finished_at,
            }
            for r in s.fixes
        ],
        "postmortem": {"id": pm.pk, "title": pm.title, "status": pm.status} if pm else None,
        "open_action_items": [
            {
                "id": i.pk,
                "title": i.title,
                "status": i.status,
                "priority": i.priority,
                "owner": i.owner.get_username() if i.owner else None,
                "due_date": i.due_date,
                "overdue": i.due_date < today,
            }
            for i in s.open_items
        ],
    }


def similar_data(incident_id: int, similar: SimilarIncidents) -> dict[str, Any]:
    today = timezone.localdate()
    return {
        "incident": incident_id,
        "runbook": similar.runbook,
        "lws": [list(pair) for pair in similar.lws],
        "nodes": list(similar.nodes),
        "fix_not_done": bool(similar.fix_not_done),
        "similar": [_item_data(s, today) for s in similar.items],
    }


@extend_schema(tags=["postmortems"])
class IncidentSimilarApi(ConsoleApi):
    """Earlier incidents like this one, newest first (at most 10): the same runbook, or
    alerts about the same LWS (namespace and lws labels) or node. Each with how long it
    lasted, what fixed it (its succeeded action runs), its postmortem and its action items
    still open; `fix_not_done` says whether any of those is still open."""

    noun = "incident"
    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="incidents_similar",
        summary="Similar past incidents",
        responses={200: SimilarIncidentsSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        incident = incident_get(incident_id=pk)
        data = similar_data(incident.pk, incident_similar(incident=incident))
        return Response(SimilarIncidentsSerializer(data).data)
