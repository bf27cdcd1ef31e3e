"""REST shapes for drills: plans, runs with their scorecard and history, and inputs."""

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from drills.adapters import ADAPTERS, SIMULATOR_FAULTS
from drills.models import DrillPlan, DrillRun, DrillRunEvent

SECONDS_MIN, SECONDS_MAX = 10, 86400


class DrillPlanSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True)

    class Meta:
        model = DrillPlan
        fields = [
            "id", "runbook", "title", "namespace", "lws", "adapter", "fault",
            "expected_branch", "max_duration_seconds", "stop_on_real_sev1",
            "detect_within_seconds", "acknowledge_within_seconds", "recover_within_seconds",
            "created_by", "created_at",
        ]  # fmt: skip
        read_only_fields = fields


class DrillPlanInputSerializer(serializers.Serializer):
    runbook = serializers.SlugField(max_length=100)
    title = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    namespace = serializers.CharField(max_length=253)
    lws = serializers.CharField(max_length=253)
    adapter = serializers.ChoiceField(choices=sorted(ADAPTERS), default="simulator")
    fault = serializers.ChoiceField(choices=list(SIMULATOR_FAULTS))
    expected_branch = serializers.CharField(
        max_length=100, required=False, allow_blank=True, default=""
    )
    max_duration_seconds = serializers.IntegerField(
        default=1800, min_value=SECONDS_MIN, max_value=SECONDS_MAX
    )
    detect_within_seconds = serializers.IntegerField(
        default=300, min_value=SECONDS_MIN, max_value=SECONDS_MAX
    )
    acknowledge_within_seconds = serializers.IntegerField(
        default=300, min_value=SECONDS_MIN, max_value=SECONDS_MAX
    )
    recover_within_seconds = serializers.IntegerField(
        default=1200, min_value=SECONDS_MIN, max_value=SECONDS_MAX
    )
    stop_on_real_sev1 = serializers.BooleanField(default=True)


class DrillStopInputSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class DrillRunEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", read_only=True, allow_null=True)

    class Meta:
        model = DrillRunEvent
        fields = ["occurred_at", "kind", "message", "actor", "payload"]
        read_only_fields = fields


class DrillRunSerializer(serializers.ModelSerializer):
    started_by = serializers.CharField(source="started_by.username", read_only=True)
    # A plain string, not an enum: "status" is an enum elsewhere in the schema already.
    status = serializers.CharField(
        read_only=True, help_text="starting, running, stopping, finished or failed."
    )
    outcome = serializers.CharField(
        read_only=True,
        help_text="passed, failed or aborted once finished (empty before). An aborted run "
        "(stopped by a person, a real SEV1, its maximum duration or an error) is judged on "
        "nothing: `passed` is null and `stop_reason` says why.",
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = DrillRun
        fields = [
            "id", "plan", "runbook", "namespace", "lws", "status", "outcome", "passed",
            "started_by", "started_at", "injected_at", "ended_at", "stop_reason", "incident",
            "error", "url",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, obj: DrillRun) -> str:
        return reverse("drills:drill-run", args=[obj.pk])


class DrillRunDetailSerializer(DrillRunSerializer):
    scorecard = serializers.DictField(read_only=True)
    plan_snapshot = serializers.DictField(read_only=True)
    events = DrillRunEventSerializer(many=True, read_only=True)
    fault_changes = serializers.ListField(
        child=serializers.DictField(), read_only=True,
        help_text="What the fault changed (kind, object, field, before, after).",
    )  # fmt: skip
    restored = serializers.ListField(
        child=serializers.DictField(), read_only=True,
        help_text="What the drill's end did with each change: result restored, cleared, "
        "left (changed since by `changed_by`; `now` is its value) or not_undoable.",
    )  # fmt: skip

    class Meta(DrillRunSerializer.Meta):
        fields = [
            *DrillRunSerializer.Meta.fields, "plan_snapshot", "scorecard", "fault_changes",
            "restored", "events",
        ]  # fmt: skip
        read_only_fields = fields


class DrillRunQuerySerializer(serializers.Serializer):
    runbook = serializers.CharField(max_length=100, required=False, default="")
    namespace = serializers.CharField(max_length=253, required=False, default="")
    lws = serializers.CharField(max_length=253, required=False, default="")
