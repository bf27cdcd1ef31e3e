"""API shapes of postmortems and action items."""

from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework import serializers

from console.bounds import BoundedDateField, IdField
from postmortems.languages import document_language
from postmortems.models import (
    OPEN_ITEM_STATUSES,
    ActionItem,
    ItemCategory,
    ItemStatus,
    MetricSnapshot,
    Postmortem,
    PostmortemTimelineEntry,
    Priority,
)
from runbooks.prometheus_texts import prometheus_text_api


class TimelineEntrySerializer(serializers.ModelSerializer):
    class Meta:
        model = PostmortemTimelineEntry
        fields = [
            "id",
            "occurred_at",
            "source",
            "source_id",
            "kind",
            "text",
            "original_text",
            "included",
        ]


class SnapshotSerializer(serializers.ModelSerializer):
    error = serializers.SerializerMethodField(
        help_text="Why the chart was not captured, in the request's language (Prometheus' "
        'own text and its address kept as they are); "" when it was.'
    )
    error_i18n = serializers.SerializerMethodField(
        help_text='The error\'s message ids and parameters ([{"id", "params"}]), or '
        "null when there is none or it has no known shape."
    )

    class Meta:
        model = MetricSnapshot
        fields = [
            "chart_id", "title", "unit", "promql", "start", "end", "step_seconds", "series",
            "error", "error_i18n", "captured_at",
        ]  # fmt: skip

    def get_error(self, snap) -> str:
        return prometheus_text_api(snap.error)[0] if snap.error else ""

    def get_error_i18n(self, snap) -> list[dict[str, Any]] | None:
        return prometheus_text_api(snap.error)[1] if snap.error else None


class ActionItemSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", default=None, allow_null=True)
    incident = serializers.IntegerField(source="incident_id")
    postmortem = serializers.IntegerField(source="postmortem_id", allow_null=True)
    overdue = serializers.SerializerMethodField()
    language = serializers.SerializerMethodField(
        help_text="The language of title and description when they came with a postmortem "
        "(its draft language: a suggestion is drafted in it, and stored text is never "
        "translated); null for an item added without one."
    )

    class Meta:
        model = ActionItem
        fields = [
            "id", "title", "description", "owner", "due_date", "priority", "category",
            "status", "wont_do_reason", "incident", "postmortem", "external_url",
            "namespace", "runbook", "source", "created_at", "updated_at", "closed_at", "overdue",
            "language",
        ]  # fmt: skip

    def get_language(self, item) -> str | None:
        return document_language(item.postmortem) if item.postmortem_id else None

    def get_overdue(self, item) -> bool:
        return item.status in OPEN_ITEM_STATUSES and item.due_date < timezone.localdate()


class PostmortemSerializer(serializers.ModelSerializer):
    incident = serializers.IntegerField(source="incident_id")
    draft_language = serializers.SerializerMethodField(
        help_text="The language the draft was written in (its headings, generated sentences "
        "and the timeline lines copied from the incident): the one its author chose, or the "
        "author's language for drafts made before there was a choice. The text is stored as "
        "written and never translated afterwards."
    )
    created_by = serializers.CharField(source="created_by.username")
    published_by = serializers.CharField(
        source="published_by.username", default=None, allow_null=True
    )
    timeline = TimelineEntrySerializer(source="entries", many=True)
    snapshots = SnapshotSerializer(many=True)
    action_items = ActionItemSerializer(many=True)
    reviewers = serializers.SerializerMethodField()

    class Meta:
        model = Postmortem
        fields = [
            "id", "incident", "title", "status", "draft_state", "draft_error", "draft_language",
            "version",
            "revision", "published_revision",
            "summary", "impact", "timeline", "root_cause", "contributing_factors",
            "action_items", "lessons_learned", "impact_data", "runbook", "category",
            "suggestions", "snapshots", "reviewers", "created_by", "created_at",
            "drafted_at", "published_at", "published_by",
        ]  # fmt: skip

    def get_draft_language(self, pm) -> str:
        return pm.draft_language or pm.language

    def get_reviewers(self, pm) -> list[dict]:
        # approved_revision: the revision the approval was given for (publishing needs
        # approvals of the current `revision`).
        return [
            {"user": r.user.username, "state": r.state, "approved_revision": r.approved_revision}
            for r in pm.reviewers.all()
        ]


class PostmortemDraftSerializer(serializers.Serializer):
    """What drafting takes: the language to write the draft in."""

    language = serializers.ChoiceField(
        choices=settings.LANGUAGES,
        required=False,
        help_text="The draft's language (its section headings, generated sentences and the "
        "timeline lines copied from the incident). Default: the request's language "
        "(Accept-Language or ?lang=), else English. Ignored when the incident already has "
        "a postmortem (it is answered as it is).",
    )


class ActionItemWriteSerializer(serializers.Serializer):
    """Create (incident and title required) or change (any subset) an action item."""

    incident = IdField(required=False)
    postmortem = IdField(required=False, allow_null=True)
    title = serializers.CharField(required=False, max_length=300)
    description = serializers.CharField(required=False, allow_blank=True, max_length=20_000)
    owner = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    due_date = BoundedDateField(required=False)
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    category = serializers.ChoiceField(choices=ItemCategory.choices, required=False)
    external_url = serializers.URLField(required=False, allow_blank=True, max_length=500)
    status = serializers.ChoiceField(choices=ItemStatus.choices, required=False)
    wont_do_reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class ActionItemQuerySerializer(serializers.Serializer):
    # "open" means open or in progress (what is still to do).
    status = serializers.ChoiceField(choices=ItemStatus.choices, required=False, allow_blank=True)
    owner = serializers.CharField(required=False, allow_blank=True, max_length=150)
    category = serializers.ChoiceField(
        choices=ItemCategory.choices, required=False, allow_blank=True
    )
    incident = IdField(required=False)
    overdue = serializers.BooleanField(required=False, default=False)
