"""Heartbeats (dead-man's switches): an HTTP check-in's token is shown once, when made."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from pager.models import HeartbeatKind, HeartbeatState

NAME_MAX = 200
INTERVAL_MAX = 31 * 24 * 3600


class HeartbeatSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=HeartbeatKind.choices)
    source = serializers.CharField(
        help_text="watchdog: the Alertmanager replica's URL; console: the queue or beat."
    )  # type: ignore[assignment]
    team = serializers.CharField(source="team.slug", default=None, allow_null=True)
    interval_seconds = serializers.IntegerField()
    grace_seconds = serializers.IntegerField()
    enabled = serializers.BooleanField()
    state = serializers.ChoiceField(choices=HeartbeatState.choices)
    last_seen_at = serializers.DateTimeField(allow_null=True)
    missing_since = serializers.DateTimeField(allow_null=True)
    incident = serializers.IntegerField(
        source="incident_id", allow_null=True, help_text="The incident open while it is missing."
    )
    beat_url = serializers.SerializerMethodField(
        help_text="HTTP heartbeats: where to check in (POST with `Authorization: Bearer "
        "<token>`); null for the others."
    )
    created_at = serializers.DateTimeField()

    @extend_schema_field(OpenApiTypes.URI)
    def get_beat_url(self, heartbeat: Any) -> str | None:
        if heartbeat.kind != HeartbeatKind.HTTP:
            return None
        path = reverse("pager-api:heartbeat-beat", args=[heartbeat.slug])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class HeartbeatCreatedSerializer(HeartbeatSerializer):
    token = serializers.SerializerMethodField(
        help_text="Send it as `Authorization: Bearer <token>` when checking in. Shown this "
        "once: only a hash of it is kept."
    )

    def get_token(self, heartbeat: Any) -> str:
        return str(self.context["token"])


class HeartbeatInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=NAME_MAX)
    team = serializers.SlugField(
        max_length=64, required=False, allow_null=True, help_text="The owning team's slug."
    )
    interval_seconds = serializers.IntegerField(
        min_value=1, max_value=INTERVAL_MAX, help_text="A check-in is expected this often."
    )
    grace_seconds = serializers.IntegerField(
        min_value=0,
        max_value=INTERVAL_MAX,
        required=False,
        help_text="Extra time before it counts as missing (default HEARTBEAT_GRACE_SECONDS).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs.setdefault("grace_seconds", settings.HEARTBEAT_GRACE_SECONDS)
        return attrs
