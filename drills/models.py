"""Drill plans (what to rehearse, where, and what counts as a pass), drill runs (one
rehearsal, its measurements and scorecard) and each run's append-only history."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from console.append_only import AppendOnlyModel

DRILL_LABEL = "console.llm/drill-target"


class DrillPlan(models.Model):
    """A rehearsal of one runbook against one labelled LeaderWorkerSet."""

    runbook = models.SlugField(max_length=100, db_index=True)
    title = models.CharField(max_length=200)
    namespace = models.CharField(max_length=253)
    lws = models.CharField(max_length=253)
    adapter = models.CharField(max_length=32, default="simulator")
    fault = models.CharField(max_length=100)
    # Stop condition: cleared automatically after this long, or when a real SEV1 opens.
    max_duration_seconds = models.PositiveIntegerField(default=1800)
    stop_on_real_sev1 = models.BooleanField(default=True)
    # Expected timeline and pass criteria.
    detect_within_seconds = models.PositiveIntegerField(default=300)
    acknowledge_within_seconds = models.PositiveIntegerField(default=300)
    recover_within_seconds = models.PositiveIntegerField(default=1200)
    expected_branch = models.CharField(max_length=100, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)
    # Seeded demo history (`seed_demo`), removed by `seed_demo --reset`.
    is_demo = models.BooleanField(default=False)

    class Meta:
        db_table = "runbooks_drillplan"  # kept from runbooks (no data moved)
        verbose_name = _("drill plan")
        verbose_name_plural = _("drill plans")
        ordering = ["runbook", "title", "id"]
        permissions = [("run_drill", "Can plan, start and stop chaos drills")]

    def __str__(self) -> str:
        return f"drill plan #{self.pk} {self.runbook} on {self.namespace}/{self.lws}"

    @property
    def target(self) -> str:
        return f"{self.namespace}/{self.lws}"


class DrillRunStatus(models.TextChoices):
    STARTING = "starting", _("Starting")
    RUNNING = "running", _("Running")
    STOPPING = "stopping", _("Stopping")
    FINISHED = "finished", _("Finished")
    FAILED = "failed", _("Could not run")


class DrillOutcome(models.TextChoices):
    """How a finished run is judged. Only a drill that ran its course (its incident
    recovered) is scored against the criteria; one stopped by a person, a real SEV1, its
    maximum duration or an error is aborted, with the reason, and judged on nothing."""

    PASSED = "passed", _("Passed")
    FAILED = "failed", _("Failed")
    ABORTED = "aborted", _("Aborted")


ACTIVE_DRILL_STATUSES = (
    DrillRunStatus.STARTING,
    DrillRunStatus.RUNNING,
    DrillRunStatus.STOPPING,
)


class DrillRun(models.Model):
    """One rehearsal. The plan is copied in (`plan_snapshot`) so the scorecard is judged
    against what was agreed when it ran, whatever the plan says later."""

    plan = models.ForeignKey(DrillPlan, on_delete=models.PROTECT, related_name="runs")
    runbook = models.SlugField(max_length=100)
    namespace = models.CharField(max_length=253)
    lws = models.CharField(max_length=253)
    plan_snapshot = models.JSONField(default=dict)
    status = models.CharField(
        max_length=16, choices=DrillRunStatus.choices, default=DrillRunStatus.STARTING
    )
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    started_at = models.DateTimeField()
    injected_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    stop_requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    stop_reason = models.CharField(max_length=300, blank=True)
    # What the console wrote in the text fields above, as message ids and parameters
    # (console/texts/): {field: parts}; worded in the reader's language when read.
    texts = models.JSONField(null=True, blank=True, verbose_name=_("texts"))
    incident = models.ForeignKey(
        "incidents.Incident",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="drill_runs",
    )
    passed = models.BooleanField(null=True, blank=True)  # None while active and if aborted
    outcome = models.CharField(max_length=16, choices=DrillOutcome.choices, blank=True)
    scorecard = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    # What the fault changed, as the fault source answered the injection (object, field,
    # value before, value after), and what the drill's end restored or left alone: a
    # drill takes back only its own changes, never the fleet's whole baseline.
    fault_changes = models.JSONField(default=list, blank=True)
    restored = models.JSONField(default=list, blank=True)
    # Seeded demo history (`seed_demo`), removed by `seed_demo --reset`.
    is_demo = models.BooleanField(default=False)

    class Meta:
        db_table = "runbooks_drillrun"  # kept from runbooks (no data moved)
        verbose_name = _("drill run")
        verbose_name_plural = _("drill runs")
        ordering = ["-started_at", "-id"]
        constraints = [
            # One drill at a time per target: two faults at once would score neither.
            models.UniqueConstraint(
                fields=["namespace", "lws"],
                condition=Q(status__in=[s.value for s in ACTIVE_DRILL_STATUSES]),
                name="drill_run_one_active_per_target",
            ),
        ]
        indexes = [
            models.Index(fields=["namespace", "lws", "passed", "ended_at"]),
            models.Index(fields=["runbook", "passed", "ended_at"]),
            models.Index(fields=["status"]),
        ]

    def __str__(self) -> str:
        return f"drill run #{self.pk} {self.runbook} on {self.namespace}/{self.lws} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_DRILL_STATUSES

    @property
    def is_aborted(self) -> bool:
        return self.outcome == DrillOutcome.ABORTED


# A history entry's kind (the `kind` column, an id) as the run page names it.
EVENT_KIND_LABELS = {
    "started": pgettext_lazy("drill history entry", "started"),
    "injected": pgettext_lazy("drill history entry", "injected"),
    "incident_linked": pgettext_lazy("drill history entry", "incident linked"),
    "stop_requested": pgettext_lazy("drill history entry", "stop requested"),
    "failed": pgettext_lazy("drill history entry", "failed"),
    "fault_not_active": pgettext_lazy("drill history entry", "fault not active"),
    "clear_note": pgettext_lazy("drill history entry", "clearing note"),
    "clear_failed": pgettext_lazy("drill history entry", "clearing failed"),
    "cleared": pgettext_lazy("drill history entry", "cleared"),
    "scored": pgettext_lazy("drill history entry", "scored"),
    # One per change the fault made, as the clearing reported it (drills/restore.py STEPS).
    "restored": pgettext_lazy("drill history entry", "restored"),
    "condition_cleared": pgettext_lazy("drill history entry", "condition cleared"),
    "left_alone": pgettext_lazy("drill history entry", "left alone"),
    "not_undone": pgettext_lazy("drill history entry", "not undone"),
    "restore_step": pgettext_lazy("drill history entry", "clearing step"),
}


class DrillRunEvent(AppendOnlyModel):
    """The drill's own history: injected, incident linked, stopped, cleared, scored."""

    run = models.ForeignKey(DrillRun, on_delete=models.PROTECT, related_name="events")
    occurred_at = models.DateTimeField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    kind = models.CharField(max_length=32)
    message = models.TextField()
    payload = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "runbooks_drillrunevent"  # kept from runbooks (no data moved)
        verbose_name = _("drill run event")
        verbose_name_plural = _("drill run events")
        ordering = ["occurred_at", "id"]
        indexes = [models.Index(fields=["run", "occurred_at", "id"])]

    def __str__(self) -> str:
        return f"drill run #{self.run_id} {self.kind}: {self.message[:60]}"

    @property
    def kind_label(self) -> str:
        """The kind in the active language; a kind this version does not know, as stored."""
        return str(EVENT_KIND_LABELS.get(self.kind, self.kind))
