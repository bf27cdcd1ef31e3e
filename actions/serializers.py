"""API shapes of action runs and of the inputs that create and decide them."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from actions.api_texts import I18N_HELP, PLAN_HELP, PREVIEW_HELP, plan_shown, preview_shown
from actions.guard.api import guard_signal_api
from actions.guard.models import GuardOutcome, GuardVerdict, GuardWatch
from actions.models import ActionRun, ActionRunEvent, ActionRunStatus
from actions.selectors import run_guard
from console.bounds import IdField
from console.texts import as_api, render
from console.texts.api import I18N_SCHEMA, RenderedText, TextIds

KIND_CHOICES = (
    "scale_lws",
    "set_enforce_eager",
    "rollback_router_config",
    "restart_lws_group",
    "cordon_node",
    "update_gateway_limits",
)

STATUS_FILTER_CHOICES = (*ActionRunStatus.values, "active")


class ActionRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KIND_CHOICES)
    params = serializers.DictField(default=dict)
    idempotency_key = serializers.CharField(
        min_length=8,
        max_length=100,
        help_text="Chosen by the client, e.g. a UUID; the same person sending the same key "
        "again gets the same run back (a double click is one run).",
    )


class ActionPreviewInputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KIND_CHOICES)
    params = serializers.DictField(default=dict)


class DecisionInputSerializer(serializers.Serializer):
    note = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class UndoInputSerializer(serializers.Serializer):
    idempotency_key = serializers.CharField(min_length=8, max_length=100)


class ActionRunEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", default=None, allow_null=True)
    message = RenderedText("message", help_text="What happened, in the request's language.")
    message_i18n = TextIds("message", help_text=I18N_HELP)

    class Meta:
        model = ActionRunEvent
        fields = [
            "occurred_at",
            "actor",
            "status_from",
            "status_to",
            "message",
            "message_i18n",
            "payload",
        ]


# actions/guard/judge.py's states: ok/breach/unknown are counted, the others only shown.
SIGNAL_STATES = ("ok", "breach", "unknown", "settling", "context", "excused", "improving",
                 "late", "explained", "coincides")  # fmt: skip


class GuardSignalSerializer(serializers.Serializer):
    id = serializers.CharField()
    title = serializers.CharField()
    type = serializers.ChoiceField(choices=("availability", "latency", "quality", "pods"))
    unit = serializers.CharField(
        help_text='The unit as the runbook catalogue writes it ("s", "ratio", "of groups").'
    )
    unit_label = serializers.SerializerMethodField(
        help_text='`unit` in words, in the request\'s language ("" for a yes/no reading).'
    )
    promql = serializers.CharField()
    threshold = serializers.SerializerMethodField(
        help_text="The threshold in words, in the request's language."
    )
    threshold_i18n = serializers.SerializerMethodField(
        help_text="`threshold`'s message ids and parameters."
    )
    baseline = serializers.FloatField(allow_null=True)
    value = serializers.FloatField(allow_null=True)
    state = serializers.ChoiceField(choices=SIGNAL_STATES)
    message = serializers.SerializerMethodField(
        help_text="Why the signal is in its state, in the request's language."
    )
    message_i18n = serializers.SerializerMethodField(
        help_text="`message`'s ids and parameters; null for a signal evaluated before they "
        "were stored."
    )

    def get_unit_label(self, spec: dict) -> str:
        return guard_signal_api(spec)["unit_label"]

    def get_threshold(self, spec: dict) -> str:
        return guard_signal_api(spec)["threshold"]

    @extend_schema_field(I18N_SCHEMA)
    def get_threshold_i18n(self, spec: dict) -> list | None:
        return guard_signal_api(spec)["threshold_i18n"]

    def get_message(self, spec: dict) -> str:
        return guard_signal_api(spec)["message"]

    @extend_schema_field(I18N_SCHEMA)
    def get_message_i18n(self, spec: dict) -> list | None:
        return guard_signal_api(spec)["message_i18n"]


class GuardWatchSerializer(serializers.ModelSerializer):
    """The verification window after a change and its live verdict."""

    verdict = serializers.ChoiceField(choices=GuardVerdict.choices)
    outcome = serializers.ChoiceField(choices=GuardOutcome.choices, allow_blank=True)
    undo_run = serializers.IntegerField(source="undo_run_id", allow_null=True)
    signals = GuardSignalSerializer(many=True)
    verdict_reason = RenderedText(
        "verdict_reason", help_text="Why the verdict, in the request's language."
    )
    verdict_reason_i18n = TextIds("verdict_reason", help_text=I18N_HELP)
    last_error = RenderedText(
        "last_error",
        help_text="Why the signals cannot be judged now, in the request's language.",
    )
    last_error_i18n = TextIds("last_error", help_text=I18N_HELP)

    class Meta:
        model = GuardWatch
        fields = [
            "id",
            "runbook",
            "subject",
            "changed_at",
            "ends_at",
            "interval_seconds",
            "verdict",
            "verdict_reason",
            "verdict_reason_i18n",
            "signals",
            "evaluations",
            "unknown_evaluations",
            "last_evaluated_at",
            "last_error",
            "last_error_i18n",
            "outcome",
            "undo_run",
        ]


class ActionRunSerializer(serializers.ModelSerializer):
    incident = serializers.IntegerField(source="incident_id")
    requested_by = serializers.CharField(source="requested_by.username")
    decided_by = serializers.CharField(source="decided_by.username", default=None, allow_null=True)
    undo_of = serializers.IntegerField(source="undo_of_id", allow_null=True)
    active = serializers.BooleanField(source="is_active")
    status = serializers.ChoiceField(choices=ActionRunStatus.choices)
    guard = serializers.SerializerMethodField()
    approval_reason = RenderedText(
        "approval_reason", help_text="Why a second person must approve, in the request's language."
    )
    approval_reason_i18n = TextIds("approval_reason", help_text=I18N_HELP)
    verification = RenderedText(
        "verification", help_text="What the read-back found, in the request's language."
    )
    verification_i18n = TextIds("verification", help_text=I18N_HELP)
    error = RenderedText("error", help_text="Why the run failed, in the request's language.")
    error_i18n = TextIds("error", help_text=I18N_HELP)
    plan = serializers.SerializerMethodField(help_text="The plan the worker wrote: " + PLAN_HELP)
    preview = serializers.SerializerMethodField(help_text="What the requester saw: " + PREVIEW_HELP)

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_plan(self, run: ActionRun) -> dict | None:
        return plan_shown(run.plan)

    @extend_schema_field(serializers.DictField())
    def get_preview(self, run: ActionRun) -> dict | None:
        return preview_shown(run.preview)

    @extend_schema_field(GuardWatchSerializer(allow_null=True))
    def get_guard(self, run: ActionRun) -> dict | None:
        watch = run_guard(run)
        return GuardWatchSerializer(watch).data if watch is not None else None

    class Meta:
        model = ActionRun
        fields = [
            "id",
            "incident",
            "kind",
            "target",
            "params",
            "status",
            "active",
            "requested_by",
            "requested_at",
            "requires_approval",
            "approval_reason",
            "approval_reason_i18n",
            "decided_by",
            "decided_at",
            "decision_note",
            "queued_at",
            "started_at",
            "finished_at",
            "preview",
            "before",
            "plan",
            "after",
            "verification",
            "verification_i18n",
            "attempts",
            "error",
            "error_i18n",
            "error_code",
            "undo_of",
            "runbook",
            "guard",
        ]


class ActionRunDetailSerializer(ActionRunSerializer):
    events = ActionRunEventSerializer(many=True)

    class Meta(ActionRunSerializer.Meta):
        fields = [*ActionRunSerializer.Meta.fields, "events"]


@extend_schema_field(OpenApiTypes.STR)
class _Said(serializers.Field):
    """A Preview's text in the request's language (`<field>_msg` beside it holds the
    parts)."""

    def __init__(self, field: str, **kwargs) -> None:
        self.text_field = field
        kwargs.update(source="*", read_only=True)
        super().__init__(**kwargs)

    def to_representation(self, value) -> str:
        parts = getattr(value, f"{self.text_field}_msg", None)
        return render(parts, fallback=getattr(value, self.text_field))


@extend_schema_field(I18N_SCHEMA)
class _SaidIds(_Said):
    """The ids and parameters of a Preview's text; null when it has none."""

    def to_representation(self, value):
        return as_api(getattr(value, f"{self.text_field}_msg", None))


class ActionPreviewSerializer(serializers.Serializer):
    kind = serializers.CharField()
    params = serializers.DictField()
    target = serializers.CharField()
    current = serializers.DictField(allow_null=True)
    plan = serializers.SerializerMethodField(help_text=PLAN_HELP)
    dry_run = _Said("dry_run", help_text="The server's dry run, in the request's language.")
    dry_run_i18n = _SaidIds("dry_run", help_text=I18N_HELP)
    error = _Said("error", help_text="Why there is no plan, in the request's language.")
    error_i18n = _SaidIds("error", help_text=I18N_HELP)
    requires_approval = serializers.BooleanField()
    approval_reason = _Said(
        "approval_reason", help_text="Why a second person must approve, in the request's language."
    )
    approval_reason_i18n = _SaidIds("approval_reason", help_text=I18N_HELP)
    busy_with = serializers.IntegerField(source="busy_with.pk", allow_null=True, default=None)

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_plan(self, preview) -> dict | None:
        return plan_shown(preview.plan)


class ActionListQuerySerializer(serializers.Serializer):
    incident = IdField(required=False)
    status = serializers.ChoiceField(
        choices=STATUS_FILTER_CHOICES, required=False, allow_blank=True
    )
    kind = serializers.ChoiceField(choices=KIND_CHOICES, required=False, allow_blank=True)
    target = serializers.CharField(required=False, allow_blank=True, max_length=200)
    requested_by = serializers.CharField(required=False, allow_blank=True, max_length=150)
