"""REST API shapes of the archive (incidents/archive/api.py)."""

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.bounds import IdField
from incidents.archive.display import BatchState, batch_state
from incidents.archive.requests import MAX_DAYS
from incidents.archive.services import MIN_DAYS, RESTORE_MAX
from incidents.models import ArchiveBatch, IncidentArchive


class ArchiveBatchSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(
        source="created_by.username",
        read_only=True,
        allow_null=True,
        help_text="Who ran it; null for the console itself (retention, the management command).",
    )
    state = serializers.SerializerMethodField(
        help_text="running; finished; interrupted: unfinished six hours after it started (its "
        "worker stopped), what it moved is archived and counted."
    )

    class Meta:
        model = ArchiveBatch
        fields = [
            "id", "created_at", "finished_at", "state", "created_by", "method",
            "older_than_days", "cutoff", "incidents", "alerts", "events", "restored",
        ]  # fmt: skip
        read_only_fields = fields
        extra_kwargs = {
            "created_at": {"help_text": "When the run started."},
            "cutoff": {"help_text": "The rule: incidents resolved before this were archived."},
            "incidents": {"help_text": "Incidents archived by this batch."},
            "alerts": {"help_text": "Alerts moved out of the hot tables."},
            "events": {"help_text": "Timeline entries moved out of the hot tables."},
            "restored": {"help_text": "Of its incidents, how many were restored since."},
        }

    @extend_schema_field(serializers.ChoiceField(choices=BatchState.choices))
    def get_state(self, obj: ArchiveBatch) -> str:
        return str(batch_state(obj))


class ArchivedIncidentSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="incident_id", read_only=True, help_text="Incident id.")
    title = serializers.CharField(source="incident.title", read_only=True)
    severity = serializers.CharField(source="incident.severity", read_only=True)
    namespace = serializers.CharField(source="incident.namespace", read_only=True)
    resolved_at = serializers.DateTimeField(source="incident.resolved_at", read_only=True)
    batch = serializers.IntegerField(source="batch_id", read_only=True, help_text="Batch id.")
    url = serializers.SerializerMethodField(help_text="The incident's page in the console.")

    class Meta:
        model = IncidentArchive
        fields = [
            "id", "title", "severity", "namespace", "resolved_at", "archived_at", "batch",
            "alerts", "events", "url",
        ]  # fmt: skip
        read_only_fields = fields
        extra_kwargs = {
            "alerts": {"help_text": "Alerts held in the archive."},
            "events": {"help_text": "Timeline entries held in the archive."},
        }

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, obj: IncidentArchive) -> str:
        path = reverse("incidents:detail", args=[obj.incident_id])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class ArchivedQuerySerializer(serializers.Serializer):
    batch = IdField(required=False, help_text="Only the incidents of this batch.")
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="An incident id (42 or #42) or words of the title.",
    )


class ArchiveRunInputSerializer(serializers.Serializer):
    older_than_days = serializers.IntegerField(
        min_value=MIN_DAYS,
        max_value=MAX_DAYS,
        help_text=f"Archive the incidents resolved more than this many days ago "
        f"({MIN_DAYS} to {MAX_DAYS}).",
    )


class QueuedSerializer(serializers.Serializer):
    task = serializers.CharField(help_text="The Celery task queued.")
    task_id = serializers.CharField(help_text="Its id, as the worker logs it.")


class ArchiveRunQueuedSerializer(QueuedSerializer):
    older_than_days = serializers.IntegerField()


class RestoreInputSerializer(serializers.Serializer):
    incidents = serializers.ListField(
        child=IdField(),
        required=False,
        allow_empty=False,
        max_length=RESTORE_MAX,
        help_text=f"Incident ids to restore now (at most {RESTORE_MAX:,}); each must be archived.",
    )
    batch = IdField(required=False, help_text="A batch id: every incident it still holds, queued.")

    def validate(self, attrs: dict) -> dict:
        if ("incidents" in attrs) == ("batch" in attrs):
            raise serializers.ValidationError(
                {"incidents": [_("Send either incidents (a list of ids) or batch, not both.")]}
            )
        return attrs


class RestoreResultSerializer(serializers.Serializer):
    incidents = serializers.IntegerField(help_text="Incidents restored.")
    alerts = serializers.IntegerField(help_text="Alerts written back.")
    events = serializers.IntegerField(help_text="Timeline entries written back.")
    alerts_kept = serializers.IntegerField(
        help_text="Archived alerts not written back because the same alert (fingerprint and "
        "start) had arrived again since; the newer one is kept."
    )


class RestoreQueuedSerializer(QueuedSerializer):
    batch = serializers.IntegerField()
