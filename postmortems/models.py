"""Postmortems, their drafted timeline and stored metric snapshots, review, edit history,
action items and in-app notifications.

`postmortems` reads incidents and runbooks; neither imports it.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy

from console.append_only import AppendOnlyModel

USER = settings.AUTH_USER_MODEL

# The sections, in the order the document shows them (the timeline and action items are
# their own rows; the rest are Markdown text fields).
TEXT_SECTIONS = ("summary", "impact", "root_cause", "contributing_factors", "lessons_learned")
SECTION_ORDER = (
    "summary",
    "impact",
    "timeline",
    "root_cause",
    "contributing_factors",
    "action_items",
    "lessons_learned",
)


class PostmortemStatus(models.TextChoices):
    DRAFT = "draft", gettext_lazy("Draft")
    IN_REVIEW = "in_review", gettext_lazy("In review")
    PUBLISHED = "published", gettext_lazy("Published")


class DraftState(models.TextChoices):
    PENDING = "pending", gettext_lazy("Being drafted")
    READY = "ready", gettext_lazy("Ready")
    FAILED = "failed", gettext_lazy("Drafting failed")


class Postmortem(models.Model):
    incident = models.OneToOneField(
        "incidents.Incident", on_delete=models.PROTECT, related_name="postmortem"
    )
    title = models.CharField(max_length=300)
    status = models.CharField(
        max_length=16, choices=PostmortemStatus.choices, default=PostmortemStatus.DRAFT
    )
    draft_state = models.CharField(
        max_length=16, choices=DraftState.choices, default=DraftState.PENDING
    )
    draft_error = models.TextField(blank=True)
    # The language the author chose for the draft (headings and timeline lines); "" for
    # drafts made before there was a choice.
    draft_language = models.CharField(max_length=16, blank=True, default="")
    summary = models.TextField(blank=True)
    impact = models.TextField(blank=True)
    root_cause = models.TextField(blank=True)
    contributing_factors = models.TextField(blank=True)
    lessons_learned = models.TextField(blank=True)
    # Computed at drafting: times, durations (seconds), alert counts, affected objects.
    impact_data = models.JSONField(default=dict, blank=True)
    runbook = models.CharField(max_length=100, blank=True)
    category = models.CharField(max_length=32, blank=True)  # failure category
    # Suggested action items (from the runbook's long-term improvements) not yet accepted.
    suggestions = models.JSONField(default=list, blank=True)
    # The language of the drafted text: the drafter's. The worker drafts and a refresh adds
    # lines in it, so one document never mixes languages; the stored text is never
    # translated afterwards.
    language = models.CharField(
        max_length=16, choices=settings.LANGUAGES, default=settings.LANGUAGE_CODE
    )
    created_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    drafted_at = models.DateTimeField(null=True, blank=True)
    review_requested_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(
        USER, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Bumped on every edit: a form posted from an older version is refused, not merged.
    version = models.PositiveIntegerField(default=1)
    # Bumped by every write that changes what would be published (text, timeline lines,
    # attached action items, refreshed facts): an approval is of one revision.
    revision = models.PositiveIntegerField(default=1)
    published_revision = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "published_at"])]
        permissions = [
            ("draft_postmortem", gettext_lazy("Can draft and edit postmortems")),
            ("review_postmortem", gettext_lazy("Can review postmortems")),
            ("publish_postmortem", gettext_lazy("Can publish postmortems")),
        ]

    def __str__(self) -> str:
        return f"Postmortem #{self.pk}: {self.title}"


class TimelineSource(models.TextChoices):
    EVENT = "event", gettext_lazy("Timeline event")
    ALERT = "alert", gettext_lazy("Alert")
    ACTION = "action", gettext_lazy("Action run")
    MANUAL = "manual", gettext_lazy("Added by hand")


class PostmortemTimelineEntry(models.Model):
    """One line of the postmortem's timeline: drafted from a source row, with its original
    time kept; the text can be edited and the line left out."""

    postmortem = models.ForeignKey(Postmortem, on_delete=models.CASCADE, related_name="entries")
    occurred_at = models.DateTimeField()
    source = models.CharField(max_length=16, choices=TimelineSource.choices)
    source_id = models.BigIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=32, blank=True)  # e.g. status_changed, alert_fired
    original_text = models.TextField()
    text = models.TextField()
    included = models.BooleanField(default=True)

    class Meta:
        ordering = ["occurred_at", "id"]
        indexes = [models.Index(fields=["postmortem", "occurred_at", "id"])]

    def __str__(self) -> str:
        return f"{self.occurred_at:%H:%M:%S} {self.text[:60]}"


class MetricSnapshot(models.Model):
    """A golden-signal chart's data over the incident window, stored at drafting time so the
    chart survives Prometheus retention."""

    postmortem = models.ForeignKey(Postmortem, on_delete=models.CASCADE, related_name="snapshots")
    chart_id = models.CharField(max_length=64)
    title = models.CharField(max_length=200)
    unit = models.CharField(max_length=32, blank=True)
    promql = models.TextField()
    start = models.DateTimeField()
    end = models.DateTimeField()
    step_seconds = models.PositiveIntegerField()
    # Plotly-ready: [{"name": "...", "x": ["YYYY-MM-DD HH:MM:SS" UTC, ...], "y": [...]}, ...]
    series = models.JSONField(default=list)
    error = models.TextField(blank=True)
    captured_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.chart_id} ({len(self.series)} series)"


class ReviewerState(models.TextChoices):
    REQUESTED = "requested", gettext_lazy("Review requested")
    APPROVED = "approved", gettext_lazy("Approved")
    CHANGES = "changes", gettext_lazy("Changes requested")


class Reviewer(models.Model):
    postmortem = models.ForeignKey(Postmortem, on_delete=models.CASCADE, related_name="reviewers")
    user = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    state = models.CharField(
        max_length=16, choices=ReviewerState.choices, default=ReviewerState.REQUESTED
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    # The postmortem's revision this reviewer approved; publishing needs the current one.
    approved_revision = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["postmortem", "user"], name="reviewer_once")]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.postmortem_id}: {self.state}"


class ReviewComment(AppendOnlyModel):
    postmortem = models.ForeignKey(Postmortem, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    section = models.CharField(max_length=32, blank=True)
    text = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.text[:60]


class PostmortemEdit(AppendOnlyModel):
    """Edit history: who changed which field, from what to what."""

    postmortem = models.ForeignKey(Postmortem, on_delete=models.CASCADE, related_name="edits")
    editor = models.ForeignKey(
        USER, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField()
    field = models.CharField(max_length=64)
    old = models.TextField(blank=True)
    new = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.field} @ {self.at:%Y-%m-%d %H:%M}"


class Priority(models.TextChoices):
    P1 = "P1", gettext_lazy("P1 (urgent)")
    P2 = "P2", "P2"
    P3 = "P3", "P3"
    P4 = "P4", gettext_lazy("P4 (someday)")


# Default due date by priority, when none is given.
DUE_BY_PRIORITY = {
    "P1": timedelta(days=7),
    "P2": timedelta(days=30),
    "P3": timedelta(days=90),
    "P4": timedelta(days=180),
}


class ItemCategory(models.TextChoices):
    MONITORING = "monitoring", gettext_lazy("Monitoring")
    AUTOMATION = "automation", gettext_lazy("Automation")
    DRILL = "drill", gettext_lazy("Drill")
    CONFIG = "config", gettext_lazy("Config")
    CAPACITY = "capacity", gettext_lazy("Capacity")
    PROCESS = "process", gettext_lazy("Process")


class ItemStatus(models.TextChoices):
    OPEN = "open", gettext_lazy("Open")
    IN_PROGRESS = "in_progress", gettext_lazy("In progress")
    DONE = "done", gettext_lazy("Done")
    WONT_DO = "wont_do", gettext_lazy("Won't do")


OPEN_ITEM_STATUSES = (ItemStatus.OPEN, ItemStatus.IN_PROGRESS)


class ActionItem(models.Model):
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    owner = models.ForeignKey(
        USER, null=True, blank=True, on_delete=models.SET_NULL, related_name="action_items"
    )
    due_date = models.DateField()
    priority = models.CharField(max_length=2, choices=Priority.choices, default=Priority.P2)
    category = models.CharField(max_length=16, choices=ItemCategory.choices)
    status = models.CharField(max_length=16, choices=ItemStatus.choices, default=ItemStatus.OPEN)
    wont_do_reason = models.TextField(blank=True)
    incident = models.ForeignKey(
        "incidents.Incident", on_delete=models.PROTECT, related_name="action_items"
    )
    postmortem = models.ForeignKey(
        Postmortem, null=True, blank=True, on_delete=models.SET_NULL, related_name="action_items"
    )
    external_url = models.URLField(max_length=500, blank=True)
    # Denormalised from the incident so reports filter without joins on hot paths.
    namespace = models.CharField(max_length=253, blank=True, db_index=True)
    runbook = models.CharField(max_length=100, blank=True, db_index=True)
    # "runbook:<slug>:<index>" for an accepted suggestion (accepting twice is one item).
    source = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    last_reminded_on = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["due_date", "id"]
        indexes = [
            models.Index(fields=["status", "due_date"]),
            models.Index(fields=["owner", "status"]),
            models.Index(fields=["category", "status"]),
            models.Index(fields=["created_at"]),
            # Open items in due order (the overdue report and its CSV): read off the
            # index, never sorted, however many a year of a large fleet leaves open.
            models.Index(
                fields=["due_date", "id"],
                condition=models.Q(status__in=["open", "in_progress"]),
                name="action_item_open_due",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["postmortem", "source"],
                condition=~models.Q(source=""),
                name="action_item_suggestion_once",
            )
        ]
        permissions = [("manage_actionitem", gettext_lazy("Can create and edit action items"))]

    def __str__(self) -> str:
        return f"{self.title} ({self.status})"


class Notification(models.Model):
    """An in-app notice for one person (overdue action items, review requests)."""

    user = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=32)
    message = models.CharField(max_length=500)
    link = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField()
    read_at = models.DateTimeField(null=True, blank=True)
    # e.g. "overdue:<item>:<date>", so a reminder run twice on one day notifies once.
    dedupe_key = models.CharField(max_length=200)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "dedupe_key"], name="notification_once")
        ]
        indexes = [models.Index(fields=["user", "read_at"])]

    def __str__(self) -> str:
        return self.message[:60]
