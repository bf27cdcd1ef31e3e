"""The deliveries API's shapes. A target is named, never its URL, recipients or secret."""

from django.utils import translation
from rest_framework import serializers

from console.bounds import IdField
from notifications.models import Delivery, DeliveryStatus, Event, Target


class TargetRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Target
        fields = ["id", "name", "kind"]


class DeliverySerializer(serializers.ModelSerializer):
    target = TargetRefSerializer(read_only=True)
    event_label = serializers.SerializerMethodField()
    rule = serializers.CharField(source="rule.name", default=None, read_only=True)
    incident = serializers.IntegerField(source="incident_id", allow_null=True, read_only=True)

    class Meta:
        model = Delivery
        fields = [
            "id", "status", "event", "event_label", "event_key", "summary", "target", "rule",
            "incident", "attempts", "last_error", "created_at", "last_attempt_at", "sent_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_event_label(self, delivery: Delivery) -> str:
        # The API speaks English whatever the caller's language: machines parse it.
        with translation.override("en"):
            return str(delivery.get_event_display())


class DeliveryListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=DeliveryStatus.choices, required=False, allow_blank=True
    )
    event = serializers.ChoiceField(choices=Event.choices, required=False, allow_blank=True)
    target = IdField(required=False, help_text="Target id.")
    incident = IdField(required=False, help_text="Incident id.")
