"""Schedules' shifts, overrides, taking a shift, swaps and the imported calendar."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from rest_framework import serializers

from pager.api.serializers.common import BoundedDateTimeField, ShiftSerializer, username
from pager.models import OverrideSource, SwapState

MAX_SHIFTS_DAYS = 62
DEFAULT_SHIFTS_DAYS = 7
REASON_MAX = 500


class ShiftsQuerySerializer(serializers.Serializer):
    start = BoundedDateTimeField(
        required=False, help_text="From (ISO 8601 date or date-time); now when absent."
    )
    end = BoundedDateTimeField(
        required=False,
        help_text=f"Until (excluded); {DEFAULT_SHIFTS_DAYS} days after the start when absent. "
        f"At most {MAX_SHIFTS_DAYS} days after the start.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start = attrs.get("start")
        end = attrs.get("end")
        if start is None:
            start = end - timedelta(days=DEFAULT_SHIFTS_DAYS) if end else self.context["now"]
        end = end or start + timedelta(days=DEFAULT_SHIFTS_DAYS)
        if end <= start:
            raise serializers.ValidationError({"end": ["The end must be after the start."]})
        if end - start > timedelta(days=MAX_SHIFTS_DAYS):
            raise serializers.ValidationError(
                {"end": [f"At most {MAX_SHIFTS_DAYS} days between start and end; ask in parts."]}
            )
        return {"start": start, "end": end}


class ShiftListSerializer(serializers.Serializer):
    schedule = serializers.CharField(source="schedule.slug")
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    shifts = ShiftSerializer(many=True, help_text="The final shifts, in order, never overlapping.")


class _WindowInput(serializers.Serializer):
    starts_at = BoundedDateTimeField(
        help_text="ISO 8601 with its offset, e.g. 2026-12-24T18:00:00+01:00."
    )
    ends_at = BoundedDateTimeField()


class OverrideInputSerializer(_WindowInput):
    user = serializers.CharField(max_length=150, help_text="Who goes on call (username).")
    reason = serializers.CharField(
        max_length=REASON_MAX, required=False, allow_blank=True, default=""
    )


class TakeInputSerializer(_WindowInput):
    reason = serializers.CharField(
        max_length=REASON_MAX, required=False, allow_blank=True, default=""
    )


class SwapInputSerializer(_WindowInput):
    note = serializers.CharField(
        max_length=REASON_MAX, required=False, allow_blank=True, default=""
    )


class OverrideSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    schedule = serializers.CharField(source="schedule.slug")
    user = serializers.CharField(source="user.username")
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    source = serializers.ChoiceField(choices=OverrideSource.choices)  # type: ignore[assignment]
    replaces = serializers.SerializerMethodField(help_text="Whose shift it covers (username).")
    reason = serializers.CharField()
    created_by = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    cancelled_at = serializers.DateTimeField(
        allow_null=True, help_text="Cancelled before it began (one begun is ended instead)."
    )

    def get_replaces(self, override: Any) -> str | None:
        return username(override.replaces)

    def get_created_by(self, override: Any) -> str | None:
        return username(override.created_by)


class SwapSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    schedule = serializers.CharField(source="schedule.slug")
    requester = serializers.CharField(source="requester.username")
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    note = serializers.CharField()
    state = serializers.ChoiceField(choices=SwapState.choices)
    taker = serializers.SerializerMethodField(help_text="Who accepted it.")
    override = serializers.IntegerField(
        source="override_id", allow_null=True, help_text="The override accepting it made."
    )
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)

    def get_taker(self, swap: Any) -> str | None:
        return username(swap.taker)


class IcalUploadSerializer(serializers.Serializer):
    ical = serializers.CharField(
        help_text="The calendar (RFC 5545 text). Or send it as the body with Content-Type "
        "text/calendar."
    )


class IcalResultSerializer(serializers.Serializer):
    schedule = serializers.CharField()
    problems = serializers.ListField(
        child=serializers.CharField(),
        help_text="Names in the calendar nobody has (their events are left out).",
    )


class IcalRefreshResultSerializer(serializers.Serializer):
    schedule = serializers.CharField()
    outcome = serializers.CharField(help_text="What reading the calendar's URL gave.")
