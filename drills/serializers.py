"""REST shapes for drills: plans, runs with their scorecard and history, and inputs.

The texts a drill wrote (history, stop reason, error, the scorecard's titles, evidence and
reasons) are worded in the request's language, each with `<field>_i18n`: its message ids
and parameters, null for a text stored before it had them."""

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.texts import as_api, render
from console.texts.api import RenderedText, TextIds
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


I18N_HELP = "The ids and parameters of the field beside it ([{id, params}]); null when "
I18N_HELP += "it was stored only as text."


class DrillRunEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", read_only=True, allow_null=True)
    message = RenderedText("message", help_text="The step, in the request's language.")
    message_i18n = TextIds("message", help_text=I18N_HELP)

    class Meta:
        model = DrillRunEvent
        fields = ["occurred_at", "kind", "message", "message_i18n", "actor", "payload"]
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
    stop_reason = RenderedText(
        "stop_reason", help_text="Why the run stopped or was asked to, in the request's language."
    )
    stop_reason_i18n = TextIds("stop_reason", help_text=I18N_HELP)
    error = RenderedText(
        "error", help_text="Why the drill could not run, in the request's language."
    )
    error_i18n = TextIds("error", help_text=I18N_HELP)
    url = serializers.SerializerMethodField()

    class Meta:
        model = DrillRun
        fields = [
            "id", "plan", "runbook", "namespace", "lws", "status", "outcome", "passed",
            "started_by", "started_at", "injected_at", "ended_at", "stop_reason",
            "stop_reason_i18n", "incident", "error", "error_i18n", "url",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, obj: DrillRun) -> str:
        return reverse("drills:drill-run", args=[obj.pk])


def _worded(value: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """`value` with each of `fields` worded from its `<field>_msg` sibling, which becomes
    `<field>_i18n` (ids and parameters)."""
    out = {k: v for k, v in value.items() if not k.endswith("_msg")}
    for field in fields:
        if field not in value:
            continue
        parts = value.get(f"{field}_msg")
        out[field] = render(parts, fallback=value.get(field) or "")
        out[f"{field}_i18n"] = as_api(parts)
    return out


def scorecard_worded(scorecard: dict[str, Any]) -> dict[str, Any]:
    """The stored scorecard in the request's language: reasons, criteria titles,
    evidence and link labels, each with its `_i18n`."""
    if not scorecard:
        return {}
    card = _worded(scorecard, ("ended_reason", "aborted_reason"))
    card["criteria"] = [
        {
            **_worded(c, ("title", "evidence")),
            "links": [_worded(link, ("label",)) for link in c.get("links") or []],
        }
        for c in scorecard.get("criteria") or []
    ]
    return card


class DrillRunDetailSerializer(DrillRunSerializer):
    scorecard = serializers.SerializerMethodField(
        help_text="outcome, passed, ended_reason and aborted_reason, measurements and the "
        "criteria (id, title, passed, evidence, values, links). Texts are in the request's "
        "language, each with `<field>_i18n` (ids and parameters; null for a scorecard "
        "stored before it had them)."
    )
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

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_scorecard(self, obj: DrillRun) -> dict[str, Any]:
        return scorecard_worded(obj.scorecard or {})

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
