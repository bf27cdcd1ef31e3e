"""The pager reports as JSON (the page's tables; definitions in docs/pager.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.bounds import BoundedDateField
from pager.reports.filters import DEFAULT_DAYS, MAX_DAYS


def seconds(value: timedelta | None) -> float | None:
    return None if value is None else round(value.total_seconds(), 3)


class ReportQuerySerializer(serializers.Serializer):
    start = BoundedDateField(
        required=False,
        help_text=f"First day (in TIME_ZONE); {DEFAULT_DAYS} days before the end when absent.",
    )
    end = BoundedDateField(required=False, help_text="Last day, included; today when absent.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("start"), attrs.get("end")
        if start and end and start > end:
            raise serializers.ValidationError({"end": ["The end date is before the start date."]})
        if start and end and (end - start).days >= MAX_DAYS:
            raise serializers.ValidationError(
                {"end": [f"A report covers at most {MAX_DAYS} days."]}
            )
        return attrs


class _Seconds(serializers.FloatField):
    """A duration in seconds."""

    def to_representation(self, value: Any) -> float | None:  # type: ignore[override]
        return seconds(value)


class PersonFiguresSerializer(serializers.Serializer):
    username = serializers.CharField()
    pages = serializers.IntegerField()
    out_of_hours = serializers.IntegerField()
    acknowledged = serializers.IntegerField(
        help_text="Pages whose incident was acknowledged while the page was open."
    )
    median_ack_seconds = _Seconds(source="median_ack", allow_null=True)
    p90_ack_seconds = _Seconds(source="p90_ack", allow_null=True)


class TeamFiguresSerializer(serializers.Serializer):
    team = serializers.CharField(source="slug", allow_null=True, help_text="null: no team.")
    name = serializers.CharField()
    pages = serializers.IntegerField()
    out_of_hours = serializers.IntegerField()
    escalations = serializers.IntegerField()
    reached_last_step = serializers.IntegerField(source="exhausted")
    median_ack_seconds = _Seconds(
        source="median_ack",
        allow_null=True,
        help_text="From each escalation's start to its first acknowledged page.",
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["team"] = data["team"] or None
        return data


class ExhaustedSerializer(serializers.Serializer):
    escalation = serializers.IntegerField(source="pk")
    incident = serializers.IntegerField(source="incident_id")
    incident_title = serializers.CharField(source="incident.title")
    incident_url = serializers.SerializerMethodField()
    severity = serializers.CharField(source="incident.severity")
    team = serializers.CharField(source="team.slug", default=None, allow_null=True)
    policy = serializers.CharField(source="policy.name", default=None, allow_null=True)
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(OpenApiTypes.URI)
    def get_incident_url(self, escalation: Any) -> str:
        path = reverse("incidents:detail", args=[escalation.incident_id])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class ReportSerializer(serializers.Serializer):
    start = serializers.DateField(source="range.start")
    end = serializers.DateField(source="range.end")
    time_zone = serializers.CharField(source="range.zone_name")
    business_hours = serializers.SerializerMethodField(
        help_text="PAGER_BUSINESS_HOURS, Monday to Friday, in each team's zone."
    )
    pages = serializers.IntegerField()
    out_of_hours = serializers.IntegerField()
    escalations = serializers.IntegerField()
    reached_last_step = serializers.IntegerField(source="exhausted_total")
    people = PersonFiguresSerializer(many=True)
    teams = TeamFiguresSerializer(many=True)
    exhausted = ExhaustedSerializer(
        many=True,
        help_text="Escalations that reached the last step, newest first (at most 50; the "
        "CSV download has all).",
    )

    def get_business_hours(self, report: Any) -> str:
        start, end = report.hours
        return f"{start:%H:%M}-{end:%H:%M}"
