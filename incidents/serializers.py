"""REST API shapes for incidents.

Output serializers render what the selectors return; input serializers check the shape
of a request body only. Whether a change is allowed (role, state) is the services' call.
"""

from typing import cast

from django.contrib.auth import get_user_model
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.bounds import IdField
from console.texts.api import TextIds
from incidents.models import Alert, Incident, IncidentStatus, Severity, TimelineEvent
from incidents.related.selectors import Related, incident_related
from incidents.services.lifecycle import NOTE_MAX_CHARS, REASON_MAX_CHARS
from incidents.timeline_text import timeline_text


def _string_map(**kwargs) -> serializers.DictField:
    return serializers.DictField(child=serializers.CharField(), read_only=True, **kwargs)


class AlertSerializer(serializers.ModelSerializer):
    labels = _string_map()
    annotations = _string_map()
    generator_url = serializers.CharField(
        read_only=True, help_text="Link to the alert's expression in Prometheus; may be empty."
    )

    class Meta:
        model = Alert
        fields = [
            "fingerprint",
            "alertname",
            "status",
            "severity",
            "labels",
            "annotations",
            "starts_at",
            "ends_at",
            "generator_url",
            "first_received_at",
            "last_received_at",
            "am_state",
            "am_silenced_by",
            "am_checked_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "am_state": {
                "help_text": "What Alertmanager said of it when last reconciled (firing, "
                "silenced, inhibited, resolved, gone: no longer listed); null: never asked."
            },
            "am_silenced_by": {"help_text": "Ids of the silences Alertmanager named."},
            "am_checked_at": {"help_text": "When Alertmanager last answered about it."},
        }


class IncidentSerializer(serializers.ModelSerializer):
    """An incident as listed."""

    # Needs alert_count and firing_count, annotated by the incident selectors.

    commander = serializers.CharField(
        source="commander.username",
        read_only=True,
        allow_null=True,
        help_text="Username of the incident commander, or null when nobody holds command.",
    )
    alert_count = serializers.IntegerField(read_only=True, help_text="Alerts in the incident.")
    firing_count = serializers.IntegerField(
        read_only=True,
        help_text="Alerts still firing, less those Alertmanager reported silenced or "
        "inhibited when last reconciled.",
    )
    silenced_count = serializers.IntegerField(
        read_only=True, help_text="Firing alerts Alertmanager reported silenced."
    )
    inhibited_count = serializers.IntegerField(
        read_only=True, help_text="Firing alerts Alertmanager reported inhibited."
    )
    runbook = serializers.CharField(
        read_only=True, help_text="Runbook slug from the alerts' runbook label; may be empty."
    )
    url = serializers.SerializerMethodField(help_text="The incident's page in the console.")

    class Meta:
        model = Incident
        fields = [
            "id",
            "title",
            "status",
            "severity",
            "runbook",
            "namespace",
            "commander",
            "started_at",
            "triggered_at",
            "acknowledged_at",
            "mitigated_at",
            "resolved_at",
            "reopened_at",
            "reopen_count",
            "alert_count",
            "firing_count",
            "silenced_count",
            "inhibited_count",
            "grouping_key",
            "is_drill",
            "url",
        ]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, obj: Incident) -> str:
        path = reverse("incidents:detail", args=[obj.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class RelatedIncidentSerializer(serializers.ModelSerializer):
    """A related incident as the incident's detail names it."""

    merged = serializers.SerializerMethodField(help_text="Merged into its lead.")

    class Meta:
        model = Incident
        fields = ["id", "title", "status", "severity", "runbook", "linked_at", "merged"]
        read_only_fields = fields

    def get_merged(self, obj: Incident) -> bool:
        return obj.merged_at is not None


class IncidentDetailSerializer(IncidentSerializer):
    """An incident with its group labels and alerts (firing first, then newest)."""

    # The view passes the alerts in the context as "alerts" (selectors.incident_alerts).

    group_labels = _string_map(help_text="The Alertmanager group labels of the incident.")
    alerts = serializers.SerializerMethodField()
    part_of = serializers.SerializerMethodField(
        help_text="The incident this one is part of (its lead, whose runbook drives "
        "triage), or null when it leads or stands alone."
    )
    related = serializers.SerializerMethodField(
        help_text="The lead's other related incidents (this one's, when it leads)."
    )

    class Meta(IncidentSerializer.Meta):
        fields = [
            *IncidentSerializer.Meta.fields,
            "group_labels", "alerts", "part_of", "related", "archived_at",
        ]  # fmt: skip
        read_only_fields = fields
        extra_kwargs = {
            "archived_at": {
                "help_text": "When retention archived its alerts and timeline (then `alerts` is "
                "empty and the timeline holds one line saying so; restore it with POST "
                "/api/v1/archive/restore/), or null."
            }
        }

    def _related(self, obj: Incident) -> Related:
        """Read once for both fields (two queries)."""
        cached: Related | None = getattr(self, "_related_read", None)
        if cached is None or cached.incident.pk != obj.pk:
            cached = self._related_read = incident_related(incident=obj)
        return cached

    @extend_schema_field(RelatedIncidentSerializer(allow_null=True))
    def get_part_of(self, obj: Incident) -> dict | None:
        lead = self._related(obj).lead
        return None if lead is None else RelatedIncidentSerializer(lead).data

    @extend_schema_field(RelatedIncidentSerializer(many=True))
    def get_related(self, obj: Incident) -> list[dict]:
        return cast(
            list[dict], RelatedIncidentSerializer(self._related(obj).members, many=True).data
        )

    @extend_schema_field(AlertSerializer(many=True))
    def get_alerts(self, obj: Incident) -> list[dict]:
        # many=True makes a ListSerializer, whose data is a list; the stubs cannot see it.
        return cast(list[dict], AlertSerializer(self.context["alerts"], many=True).data)


class TimelineEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(
        source="actor.username",
        read_only=True,
        allow_null=True,
        help_text="Username of the person who acted, or null for alerts and the system.",
    )
    message = serializers.SerializerMethodField(
        help_text="The line in the request's language (Accept-Language); as stored when "
        "it was written before it had an id."
    )
    message_i18n = TextIds(
        "message",
        help_text='The line as message ids and parameters ([{"id", "params"}]), for a client '
        "that words it itself; null when it was stored only as text.",
    )
    payload = serializers.DictField(
        read_only=True, help_text="Structured details; the keys depend on the kind."
    )

    class Meta:
        model = TimelineEvent
        fields = [
            "id", "kind", "occurred_at", "actor", "source", "message", "message_i18n", "payload",
        ]  # fmt: skip
        read_only_fields = fields

    def get_message(self, obj: TimelineEvent) -> str:
        return timeline_text(obj.kind, obj.message, obj.payload)


# --- query parameters -------------------------------------------------------------------
STATUS_FILTER_CHOICES = [*IncidentStatus.values, "open"]


class _UpperChoiceField(serializers.ChoiceField):
    def to_internal_value(self, data):
        return super().to_internal_value(str(data).strip().upper())


class IncidentListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=STATUS_FILTER_CHOICES,
        required=False,
        allow_blank=True,
        help_text='A status, or "open" for every status but resolved.',
    )
    severity = _UpperChoiceField(choices=Severity.values, required=False, allow_blank=True)
    runbook = serializers.CharField(
        required=False, allow_blank=True, help_text="Runbook slug, e.g. ttft-spike."
    )
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Text in the title, namespace or runbook, or an incident id (42 or #42).",
    )


class TimelineQuerySerializer(serializers.Serializer):
    after = IdField(
        required=False,
        min_value=0,
        help_text="Only events with an id greater than this (incremental polling).",
    )


# --- request bodies ---------------------------------------------------------------------
class ReasonInputSerializer(serializers.Serializer):
    reason = serializers.CharField(
        allow_blank=True,
        default="",
        max_length=REASON_MAX_CHARS,
        help_text="Why, in a sentence; shown on the timeline.",
    )


class EndingInputSerializer(ReasonInputSerializer):
    """Mitigate and resolve: a reason, and the confirmation asked for while alerts fire."""

    confirm = serializers.BooleanField(
        default=False,
        help_text="Mitigate or resolve although alerts still fire. Send it after a 409 "
        "with code `alerts_firing`, together with a `reason`; both go on the timeline.",
    )


class ResolveInputSerializer(EndingInputSerializer):
    """Resolve: also the confirmation asked for when nobody commands a SEV1/SEV2."""

    confirm_no_commander = serializers.BooleanField(
        default=False,
        help_text="Resolve a SEV1 or SEV2 incident although nobody is in command. Send it "
        "after a 409 with code `no_commander`; the timeline records it.",
    )


class ReopenInputSerializer(serializers.Serializer):
    reason = serializers.CharField(
        max_length=REASON_MAX_CHARS,
        help_text="Why the incident is reopened; shown on the timeline.",
    )


class NoteInputSerializer(serializers.Serializer):
    text = serializers.CharField(
        max_length=NOTE_MAX_CHARS, help_text="The note, as plain text; shown on the timeline."
    )


class CommanderInputSerializer(serializers.Serializer):
    commander = serializers.SlugRelatedField(
        slug_field="username",
        queryset=get_user_model().objects.filter(is_active=True),
        allow_null=True,
        help_text=(
            "Username of the new incident commander (your own to take command of an "
            "incident nobody commands), or null to clear it."
        ),
        error_messages={"does_not_exist": "No active user is named {value}."},
    )
