"""API shapes of the checklist (the pages show the same fields)."""

from __future__ import annotations

from rest_framework import serializers

from readiness.items import SIGN_OFF_KEYS
from readiness.models import ItemState, SignOff, SignOffAction, Verification, VerificationStatus

RAG = ("green", "amber", "red")


class SignOffSerializer(serializers.ModelSerializer):
    # A plain string: one enum of the 4 signable items is enough in the schema (the input).
    item = serializers.CharField(help_text="The checklist item's key.")
    by = serializers.CharField(source="by.username")
    action = serializers.ChoiceField(choices=SignOffAction.choices)

    class Meta:
        model = SignOff
        fields = ["id", "item", "action", "by", "at", "note", "expires_on"]


class VerificationSerializer(serializers.ModelSerializer):
    deployment = serializers.IntegerField(source="deployment_id")
    # A string, not an enum: "status" enums of other apps would collide in the schema.
    status = serializers.CharField(help_text=", ".join(VerificationStatus.values))
    requested_by = serializers.SerializerMethodField()

    class Meta:
        model = Verification
        fields = [
            "id", "deployment", "status", "trigger", "requested_by", "requested_at",
            "started_at", "finished_at", "error",
        ]  # fmt: skip

    def get_requested_by(self, obj) -> str | None:
        return obj.requested_by.username if obj.requested_by_id else None


class ItemRowSerializer(serializers.Serializer):
    key = serializers.CharField(source="item.key")
    title = serializers.CharField(source="item.title")
    # A field named like DRF's Field.source attribute: the serializer's metaclass takes it
    # out of the class, which the stubs cannot see.
    source = serializers.CharField(source="item.source")  # type: ignore[assignment]
    why = serializers.CharField(source="item.why")
    state = serializers.ChoiceField(choices=ItemState.choices)
    rag = serializers.ChoiceField(choices=RAG)
    summary = serializers.CharField()
    evidence = serializers.ListField(child=serializers.CharField())
    checked_at = serializers.DateTimeField(allow_null=True)
    signoff = SignOffSerializer(allow_null=True)
    history = SignOffSerializer(many=True)


class _CountsSerializer(serializers.Serializer):
    green = serializers.IntegerField()
    amber = serializers.IntegerField()
    red = serializers.IntegerField()


class DeploymentSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="deployment.pk")
    namespace = serializers.CharField(source="deployment.namespace")
    lws = serializers.CharField(source="deployment.lws")
    present = serializers.BooleanField(source="deployment.present")
    last_seen_at = serializers.DateTimeField(source="deployment.last_seen_at")
    rag = serializers.ChoiceField(choices=RAG)
    counts = _CountsSerializer()
    verified_at = serializers.SerializerMethodField()
    verification_in_progress = VerificationSerializer(source="active", allow_null=True)

    def get_verified_at(self, obj) -> str | None:
        v = obj.verification
        return serializers.DateTimeField().to_representation(v.finished_at) if v else None


class ChecklistSerializer(DeploymentSerializer):
    items = ItemRowSerializer(source="rows", many=True)


class SignOffInputSerializer(serializers.Serializer):
    item = serializers.ChoiceField(choices=SIGN_OFF_KEYS, help_text="A person-checked item.")
    note = serializers.CharField(max_length=1000, help_text="What was checked, and how.")
    expires_on = serializers.DateField(help_text="Last day the sign-off holds (at most a year).")


class RevokeInputSerializer(serializers.Serializer):
    item = serializers.ChoiceField(choices=SIGN_OFF_KEYS)
    note = serializers.CharField(max_length=1000, help_text="Why it no longer holds.")
