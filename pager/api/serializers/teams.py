"""Teams with what they own, their escalation policy and who is on call; the on-call
answer for an incident (owner, why, escalation, pages)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.texts import as_api, render
from pager.api.serializers.common import (
    BoundedDateTimeField,
    ScheduleOnCallSerializer,
    TeamRefSerializer,
    username,
)
from pager.api.serializers.pages import PageSerializer
from pager.api.serializers.texts import WordedIds, WordedText
from pager.escalation.timeline import reason_parts
from pager.models import EscalationState


class OwnershipSerializer(serializers.Serializer):
    """One claim: every label it sets must match (shell patterns such as `llm-prod-*`)."""

    namespace = serializers.CharField()
    lws = serializers.CharField(help_text="LeaderWorkerSet name pattern.")
    model = serializers.CharField()
    node_pool = serializers.CharField()
    runbook = serializers.CharField()


class StepSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    action = serializers.CharField(
        help_text="page_schedule (who is on call), page_user, page_channel or wait."
    )
    schedule = serializers.CharField(source="schedule.slug", default=None, allow_null=True)
    user = serializers.CharField(source="user.username", default=None, allow_null=True)
    team = serializers.CharField(
        source="team.slug",
        default=None,
        allow_null=True,
        help_text="page_channel: this team's channel (the policy's team when null).",
    )
    wait_minutes = serializers.IntegerField(help_text="Then wait this long before the next step.")
    severities = serializers.ListField(
        child=serializers.CharField(), help_text="Only for these severities (empty: all)."
    )
    active_from = serializers.TimeField(allow_null=True)
    active_until = serializers.TimeField(allow_null=True)
    time_zone = serializers.CharField()


class PolicySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    is_default = serializers.BooleanField()
    repeat_times = serializers.IntegerField(help_text="Times the steps run again after the last.")
    ack_timeout_minutes = serializers.IntegerField(
        allow_null=True,
        help_text="An acknowledgement without progress this long pages again (null: never).",
    )
    steps = StepSerializer(many=True, source="steps.all")


class PolicyRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class ChannelSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()


class TeamSerializer(serializers.Serializer):
    # The view passes "oncall" in the context for the schedules (ScheduleOnCallSerializer).

    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    is_default = serializers.BooleanField(help_text="Catches incidents no other team owns.")
    members = serializers.SerializerMethodField(help_text="Usernames.")
    ownerships = OwnershipSerializer(many=True, source="ownerships.all")
    escalation_policy = PolicySerializer(
        allow_null=True, help_text="null: incidents of this team follow the default policy."
    )
    channel = ChannelSerializer(allow_null=True, help_text="The team's channel target.")
    schedules = ScheduleOnCallSerializer(many=True, source="schedules.all")

    def get_members(self, team: Any) -> list[str]:
        return sorted(u.get_username() for u in team.members.all())


class OnCallQuerySerializer(serializers.Serializer):
    at = BoundedDateTimeField(
        required=False, help_text="The moment to ask about (ISO 8601); now when absent."
    )


class TeamOnCallSerializer(serializers.Serializer):
    team = TeamRefSerializer()
    at = serializers.DateTimeField()
    schedules = ScheduleOnCallSerializer(many=True)


class EscalationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    episode = serializers.IntegerField(help_text="The incident's reopen count when it began.")
    state = serializers.ChoiceField(choices=EscalationState.choices)
    step_index = serializers.IntegerField(help_text="The next step to run (0-based).")
    loop = serializers.IntegerField(help_text="Times the policy was repeated.")
    repage_round = serializers.IntegerField(help_text="Acknowledgements that expired.")
    next_due_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField()
    acknowledged_at = serializers.DateTimeField(allow_null=True)
    acknowledged_by = serializers.SerializerMethodField()
    ack_expires_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True)
    stop_reason = WordedText(
        reason_parts,
        help_text="Why it stopped, in the request's language (a reason a person gave as written).",
    )
    stop_reason_i18n = WordedIds(
        reason_parts,
        source="stop_reason",
        help_text='The pager\'s own reason as message ids and parameters ([{"id", "params"}]); '
        "null for a reason a person gave, or none.",
    )
    maintenance = serializers.CharField(
        source="maintenance.name",
        default=None,
        allow_null=True,
        help_text="The maintenance window that kept it from paging.",
    )

    def get_acknowledged_by(self, escalation: Any) -> str | None:
        return username(escalation.acknowledged_by)


class IncidentOnCallSerializer(serializers.Serializer):
    incident = serializers.IntegerField(source="incident.pk")
    team = TeamRefSerializer(allow_null=True, help_text="The owning team (null: none).")
    policy = PolicyRefSerializer(allow_null=True, help_text="The escalation policy it follows.")
    why = serializers.SerializerMethodField(
        help_text="Why this team owns it, in the request's language."
    )
    why_i18n = serializers.SerializerMethodField(
        help_text='Why, as message ids and parameters ([{"id", "params"}]).'
    )
    schedules = serializers.SerializerMethodField(
        help_text="The owning team's schedules, each with who is on call now and next."
    )
    escalation = EscalationSerializer(
        allow_null=True, help_text="The current episode's escalation (null: none began)."
    )
    pages = PageSerializer(many=True, help_text="The escalation's pages, oldest first.")

    def get_why(self, found: Any) -> str:
        return render(found.why.stored)

    @extend_schema_field(
        {"type": "array", "items": {"type": "object", "additionalProperties": True}}
    )
    def get_why_i18n(self, found: Any) -> list[dict[str, Any]] | None:
        return as_api(found.why.stored)

    @extend_schema_field(ScheduleOnCallSerializer(many=True))
    def get_schedules(self, found: Any) -> list[dict[str, Any]]:
        oncall = {schedule.pk: now for schedule, now in found.schedules}
        shown = ScheduleOnCallSerializer(
            [schedule for schedule, _ in found.schedules], many=True, context={"oncall": oncall}
        )
        return list(shown.data)
