"""Maintenance windows: incidents still open inside one, but nobody is paged; each
occurrence ends with a summary of what happened inside it."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class MaintenanceWindow(models.Model):
    name = models.CharField(_("name"), max_length=200)
    team = models.ForeignKey(
        "pager.Team", null=True, blank=True, on_delete=models.CASCADE, related_name="windows"
    )
    # Label patterns an incident must match (the ownership labels); empty with a team:
    # everything the team owns.
    matchers = models.JSONField(_("labels"), default=dict, blank=True)
    starts_at = models.DateTimeField(_("starts at"))
    ends_at = models.DateTimeField(_("ends at"))
    # An RFC 5545 RRULE repeating the first occurrence (e.g. FREQ=WEEKLY;BYDAY=TU), in
    # `time_zone`'s wall-clock time; empty: once.
    recurrence = models.CharField(_("repeats (RRULE)"), max_length=500, blank=True)
    time_zone = models.CharField(_("time zone"), max_length=64, default="UTC")
    reason = models.CharField(_("reason"), max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-starts_at"]
        verbose_name = _("maintenance window")
        verbose_name_plural = _("maintenance windows")

    def __str__(self) -> str:
        return self.name


class MaintenanceSummary(models.Model):
    """What happened inside one occurrence, written once when it ends."""

    window = models.ForeignKey(
        MaintenanceWindow, on_delete=models.CASCADE, related_name="summaries"
    )
    occurrence_start = models.DateTimeField()
    occurrence_end = models.DateTimeField()
    incident_ids = models.JSONField(default=list)
    text = models.TextField()
    written_at = models.DateTimeField()

    class Meta:
        ordering = ["-occurrence_end"]
        constraints = [
            models.UniqueConstraint(
                fields=["window", "occurrence_start"], name="pager_summary_occurrence"
            )
        ]

    def __str__(self) -> str:
        return f"{self.window_id} {self.occurrence_start:%Y-%m-%d %H:%M}"
