"""API shapes of the checklist (the pages show the same fields)."""

from __future__ import annotations

from django.utils.translation import gettext
from rest_framework import serializers

from console.texts import as_api, render
from readiness.items import SIGN_OFF_KEYS
from readiness.models import ItemState, SignOff, SignOffAction, Verification, VerificationStatus
from readiness.texts import item_title, item_why, verification_error_parts

RAG = ("green", "amber", "red")
IDS_HELP = (
    '%s as message ids and parameters ([{"id", "params"}]), for a client that words it '
    "itself; null when it was stored only as text."
)


def _ids(what: str, **kwargs) -> serializers.ListField:
    """A text's ids and parameters: [{"id", "params"}], a nested phrase in the same shape."""
    return serializers.ListField(
        child=serializers.DictField(), allow_null=True, help_text=IDS_HELP % what, **kwargs
    )


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
    error = serializers.SerializerMethodField(
        help_text="Why the verification failed, in the request's language (Accept-Language); "
        "empty unless it failed."
    )
    error_i18n = serializers.SerializerMethodField(help_text=IDS_HELP % "The error")

    class Meta:
        model = Verification
        fields = [
            "id", "deployment", "status", "trigger", "requested_by", "requested_at",
            "started_at", "finished_at", "error", "error_i18n",
        ]  # fmt: skip

    def get_requested_by(self, obj) -> str | None:
        return obj.requested_by.username if obj.requested_by_id else None

    def get_error(self, obj) -> str:
        return render(verification_error_parts(obj.error), fallback=obj.error)

    def get_error_i18n(self, obj) -> list[dict] | None:
        return as_api(verification_error_parts(obj.error))


class ItemRowSerializer(serializers.Serializer):
    key = serializers.CharField(source="item.key")
    title = serializers.SerializerMethodField(help_text="The item, in the request's language.")
    title_i18n = serializers.SerializerMethodField(help_text=IDS_HELP % "The title")
    # A field named like DRF's Field.source attribute: the serializer's metaclass takes it
    # out of the class, which the stubs cannot see.
    source = serializers.CharField(source="item.source")  # type: ignore[assignment]
    why = serializers.SerializerMethodField(
        help_text="Why the item matters, in the request's language."
    )
    why_i18n = serializers.SerializerMethodField(help_text=IDS_HELP % "The explanation")
    state = serializers.ChoiceField(choices=ItemState.choices)
    rag = serializers.ChoiceField(choices=RAG)
    summary = serializers.CharField(
        source="summary_shown",
        help_text="What the console found (or the sign-off), in the request's language "
        "(Accept-Language); as stored for a check written before it had ids.",
    )
    summary_i18n = _ids("The summary")
    evidence = serializers.ListField(
        source="evidence_shown",
        child=serializers.CharField(),
        help_text="Lines a person can check, in the request's language; a sign-off's note "
        "as typed.",
    )
    evidence_i18n = serializers.ListField(
        child=serializers.ListField(child=serializers.DictField(), allow_null=True),
        allow_null=True,
        help_text="One ids-and-parameters list per evidence line; null when the lines were "
        "stored only as text or are a person's note.",
    )
    checked_at = serializers.DateTimeField(allow_null=True)
    signoff = SignOffSerializer(allow_null=True)
    history = SignOffSerializer(many=True)

    def get_title(self, row) -> str:
        return gettext(row.item.title)  # marked in readiness/items.py

    def get_title_i18n(self, row) -> list[dict] | None:
        return as_api(item_title(row.item.key).stored)

    def get_why(self, row) -> str:
        return gettext(row.item.why)

    def get_why_i18n(self, row) -> list[dict] | None:
        return as_api(item_why(row.item.key).stored)


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
