"""Shapes several parts of the pager API share: who is on call, references to teams,
schedules and people, and bounded date-times."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.bounds import DATE_MAX, DATE_MIN, DATE_RANGE_MESSAGE


class BoundedDateTimeField(serializers.DateTimeField):
    """A date-time the schedule arithmetic can shift by weeks: its date within
    DATE_MIN..DATE_MAX (console/bounds.py), else 400 naming the field. A value without
    an offset is read in the console's time zone (TIME_ZONE)."""

    def to_internal_value(self, value: Any) -> datetime:
        parsed = super().to_internal_value(value)
        if not DATE_MIN <= parsed.date() <= DATE_MAX:
            raise serializers.ValidationError(DATE_RANGE_MESSAGE)
        return parsed


def username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


class TeamRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()


class ScheduleRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    time_zone = serializers.CharField(help_text="The zone its rotations hand off in (IANA).")


class ShiftSerializer(serializers.Serializer):
    user = serializers.CharField(source="username", help_text="Who is on call (username).")
    user_id = serializers.IntegerField()
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField(help_text="Excluded: the next shift starts then.")
    source = serializers.CharField(
        help_text="Why this person: rotation, override, take (took the shift), swap "
        "(accepted a swap) or ical (the imported calendar)."
    )  # type: ignore[assignment]
    layer = serializers.CharField(help_text="The rotation's name, `override` or `iCal`.")
    replaces_id = serializers.IntegerField(
        allow_null=True, help_text="Whose shift it covers (user id; overrides, takes, swaps)."
    )


class OnCallSerializer(serializers.Serializer):
    now = ShiftSerializer(many=True, help_text="On call at the moment asked (empty: nobody).")
    next = ShiftSerializer(
        allow_null=True, help_text="The next shift to begin after it (null: none in 35 days)."
    )


class ScheduleOnCallSerializer(ScheduleRefSerializer):
    # `oncall` comes from the context: {schedule id: OnCall}, computed for all at once.

    oncall = serializers.SerializerMethodField(help_text="Who is on call now, and next.")

    @extend_schema_field(OnCallSerializer)
    def get_oncall(self, schedule: Any) -> dict[str, Any]:
        return OnCallSerializer(self.context["oncall"][schedule.pk]).data
