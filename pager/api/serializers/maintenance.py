"""Maintenance windows: nobody is paged for what they cover; incidents still open."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from pager.api.serializers.common import BoundedDateTimeField, username
from pager.models.teams import OWNERSHIP_LABELS

NAME_MAX = 200
REASON_MAX = 500
LABELS = ", ".join(OWNERSHIP_LABELS)


class WindowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    team = serializers.CharField(source="team.slug", default=None, allow_null=True)
    matchers = serializers.DictField(
        child=serializers.CharField(),
        help_text=f"Label patterns an incident must match ({LABELS}); empty with a team: "
        "everything the team owns.",
    )
    starts_at = serializers.DateTimeField(help_text="The first occurrence's start.")
    ends_at = serializers.DateTimeField(help_text="The first occurrence's end.")
    recurrence = serializers.CharField(
        help_text="An RFC 5545 RRULE repeating it in `time_zone` (e.g. FREQ=WEEKLY;BYDAY=TU); "
        "empty: once."
    )
    time_zone = serializers.CharField()
    reason = serializers.CharField()
    created_by = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    cancelled_at = serializers.DateTimeField(allow_null=True)

    def get_created_by(self, window: Any) -> str | None:
        return username(window.created_by)


class WindowInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=NAME_MAX)
    team = serializers.SlugField(
        max_length=64, required=False, allow_null=True, help_text="The team's slug."
    )
    matchers = serializers.DictField(
        child=serializers.CharField(max_length=253),
        required=False,
        default=dict,
        help_text=f'Label patterns ({LABELS}), e.g. {{"namespace": "llm-prod-*"}}.',
    )
    starts_at = BoundedDateTimeField()
    ends_at = BoundedDateTimeField(help_text="At most 31 days after the start.")
    recurrence = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    time_zone = serializers.CharField(max_length=64, required=False, default="UTC")
    reason = serializers.CharField(
        max_length=REASON_MAX, required=False, allow_blank=True, default=""
    )


class WindowListQuerySerializer(serializers.Serializer):
    include_past = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Also the windows that are over or cancelled.",
    )
