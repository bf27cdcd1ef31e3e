"""API shapes of action runs and of the inputs that create and decide them."""

from rest_framework import serializers

from console.bounds import IdField
from runbooks.actions.models import ActionRun, ActionRunEvent, ActionRunStatus

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

    class Meta:
        model = ActionRunEvent
        fields = ["occurred_at", "actor", "status_from", "status_to", "message", "payload"]


class ActionRunSerializer(serializers.ModelSerializer):
    incident = serializers.IntegerField(source="incident_id")
    requested_by = serializers.CharField(source="requested_by.username")
    decided_by = serializers.CharField(source="decided_by.username", default=None, allow_null=True)
    undo_of = serializers.IntegerField(source="undo_of_id", allow_null=True)
    active = serializers.BooleanField(source="is_active")
    status = serializers.ChoiceField(choices=ActionRunStatus.choices)

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
            "attempts",
            "error",
            "error_code",
            "undo_of",
            "runbook",
        ]


class ActionRunDetailSerializer(ActionRunSerializer):
    events = ActionRunEventSerializer(many=True)

    class Meta(ActionRunSerializer.Meta):
        fields = [*ActionRunSerializer.Meta.fields, "events"]


class ActionPreviewSerializer(serializers.Serializer):
    kind = serializers.CharField()
    params = serializers.DictField()
    target = serializers.CharField()
    current = serializers.DictField(allow_null=True)
    plan = serializers.DictField(allow_null=True)
    dry_run = serializers.CharField(allow_blank=True)
    error = serializers.CharField(allow_blank=True)
    requires_approval = serializers.BooleanField()
    approval_reason = serializers.CharField(allow_blank=True)
    busy_with = serializers.IntegerField(source="busy_with.pk", allow_null=True, default=None)


class ActionListQuerySerializer(serializers.Serializer):
    incident = IdField(required=False)
    status = serializers.ChoiceField(
        choices=STATUS_FILTER_CHOICES, required=False, allow_blank=True
    )
    kind = serializers.ChoiceField(choices=KIND_CHOICES, required=False, allow_blank=True)
    target = serializers.CharField(required=False, allow_blank=True, max_length=200)
    requested_by = serializers.CharField(required=False, allow_blank=True, max_length=150)
