"""The deliveries API's shapes. A target is named, never its URL, recipients or secret."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.bounds import IdField
from console.texts.api import I18N_SCHEMA, RenderedText, TextIds
from notifications.models import Delivery, DeliveryStatus, Event, Target
from notifications.services.errors import last_error_i18n, last_error_shown


class TargetRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Target
        fields = ["id", "name", "kind"]


class DeliverySerializer(serializers.ModelSerializer):
    target = TargetRefSerializer(read_only=True)
    event_label = serializers.SerializerMethodField(
        help_text="The event's name in the request's language (Accept-Language or ?lang=)."
    )
    summary = RenderedText(
        "summary",
        help_text="The message's one line in the request's language; what was sent is in "
        "the target's language. As stored for deliveries recorded before it had an id.",
    )
    summary_i18n = TextIds(
        "summary",
        help_text='The summary as message ids and parameters ([{"id", "params"}]), for a '
        "client that words it itself; null when it was stored only as text.",
    )
    last_error = serializers.SerializerMethodField(
        help_text='Why the last attempt failed, in the request\'s language ("" when it did '
        "not). What a remote server or library said is quoted as it came."
    )
    last_error_i18n = serializers.SerializerMethodField(
        help_text='`last_error` as message ids and parameters ([{"id", "params"}]); null '
        "when there is none or it was stored only as text."
    )
    rule = serializers.CharField(source="rule.name", default=None, read_only=True)
    incident = serializers.IntegerField(source="incident_id", allow_null=True, read_only=True)

    class Meta:
        model = Delivery
        fields = [
            "id", "status", "event", "event_label", "event_key", "summary", "summary_i18n",
            "target", "rule", "incident", "attempts", "last_error", "last_error_i18n",
            "created_at",
            "last_attempt_at", "sent_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_last_error(self, delivery: Delivery) -> str:
        return last_error_shown(delivery)

    @extend_schema_field(I18N_SCHEMA)
    def get_last_error_i18n(self, delivery: Delivery) -> list[dict[str, Any]] | None:
        return last_error_i18n(delivery)

    def get_event_label(self, delivery: Delivery) -> str:
        # The request's language (console/viewer.py activates it for the API).
        return str(delivery.get_event_display())


class DeliveryListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=DeliveryStatus.choices, required=False, allow_blank=True
    )
    event = serializers.ChoiceField(choices=Event.choices, required=False, allow_blank=True)
    target = IdField(required=False, help_text="Target id.")
    incident = IdField(required=False, help_text="Incident id.")
