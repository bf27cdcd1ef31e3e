"""Pages and their deliveries (one per contact method tried, in the person's order)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.bounds import IdField
from pager.api.serializers.texts import WordedIds, WordedText
from pager.models import ContactKind, DeliveryState, PageStatus
from pager.texts import delivery_error


class PageDeliverySerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="1: tried first.")
    kind = serializers.ChoiceField(choices=ContactKind.choices)
    method = serializers.IntegerField(
        source="method_id", allow_null=True, help_text="Contact method id (null: removed since)."
    )
    method_label = serializers.CharField(source="method.label", default="", allow_blank=True)
    state = serializers.ChoiceField(
        choices=DeliveryState.choices,
        help_text="unknown: the worker stopped mid-send; it may have gone out, and the page "
        "moved on to the next method.",
    )
    attempts = serializers.IntegerField()
    claimed_at = serializers.DateTimeField(allow_null=True)
    sent_at = serializers.DateTimeField(allow_null=True)
    error = WordedText(
        delivery_error,
        help_text="Why it failed (empty when it did not): the service's own error as it "
        "answered, or the pager's in the request's language.",
    )
    error_i18n = WordedIds(
        delivery_error,
        source="error",
        help_text='The pager\'s own error as message ids and parameters ([{"id", "params"}]); '
        "null for a service's error (shown as it answered) or none.",
    )


class PageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    incident = serializers.IntegerField(source="incident_id")
    incident_title = serializers.CharField(source="incident.title")
    incident_url = serializers.SerializerMethodField(help_text="The incident's page.")
    escalation = serializers.IntegerField(source="escalation_id")
    team = serializers.CharField(
        source="escalation.team.slug",
        default=None,
        allow_null=True,
        help_text="The owning team's slug (null: no team).",
    )
    user = serializers.CharField(
        source="user.username", default=None, allow_null=True, help_text="Who was paged."
    )
    channel = serializers.CharField(
        source="channel.name",
        default=None,
        allow_null=True,
        help_text="Or the team channel posted to (a notification target's name).",
    )
    step_position = serializers.IntegerField(help_text="The policy step that paged.")
    loop = serializers.IntegerField(help_text="Which repeat of the policy.")
    repage_round = serializers.IntegerField(help_text="Which round (acknowledgements expired).")
    status = serializers.ChoiceField(choices=PageStatus.choices)
    due_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    late_seconds = serializers.FloatField(help_text="How late the step ran after it was due.")
    first_sent_at = serializers.DateTimeField(allow_null=True)
    acknowledged_at = serializers.DateTimeField(allow_null=True)
    deliveries = PageDeliverySerializer(many=True, source="deliveries.all")

    @extend_schema_field(OpenApiTypes.URI)
    def get_incident_url(self, page: Any) -> str:
        path = reverse("incidents:detail", args=[page.incident_id])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class PageListQuerySerializer(serializers.Serializer):
    team = serializers.SlugField(
        max_length=64, required=False, allow_blank=True, help_text="A team's slug."
    )
    user = serializers.CharField(
        max_length=150, required=False, allow_blank=True, help_text="A username."
    )
    status = serializers.ChoiceField(choices=PageStatus.choices, required=False, allow_blank=True)
    incident = IdField(required=False, help_text="Incident id.")
