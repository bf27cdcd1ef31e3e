"""A guard: the verification window after a change, watched against the runbook's golden
signals, with its live verdict and what was done about a breach."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

# The guard's message ids ("guard.*", console/texts/) load with the app, so any process
# that reads a watch or a timeline line can word its parts (actions/apps.py need not).
from actions.guard import wording  # noqa: F401


class GuardVerdict(models.TextChoices):
    WATCHING = "watching", _("Watching")
    PASSED = "passed", _("Passed")
    BREACHED = "breached", _("Breached")
    # Prometheus could not be asked (or had no data) for part of the window: never an undo.
    UNKNOWN = "unknown", _("Unknown")


class GuardOutcome(models.TextChoices):
    NONE = "", _("None")
    UNDO_REQUESTED = "undo_requested", _("Undo requested")
    PAGED = "paged", _("Commander paged")


class GuardWatch(models.Model):
    """One verification window. `run` is the console's own change; a change the console
    was only told about (a ConfigMap revision it did not make) has `revision` instead.
    `signals` holds, per guard signal, its threshold, baseline, latest readings (the
    changed and unchanged pods' values, or the trend's), state and why."""

    incident = models.ForeignKey(
        "incidents.Incident", on_delete=models.PROTECT, related_name="guard_watches"
    )
    run = models.OneToOneField(
        "actions.ActionRun",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="guard",
    )
    revision = models.ForeignKey(
        "actions.ConfigRevision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    runbook = models.CharField(max_length=100)
    subject = models.CharField(max_length=255)  # what changed, e.g. configmap/ns/name
    labels = models.JSONField(default=dict)  # placeholder values for the PromQL
    changed_at = models.DateTimeField()  # the baseline is read just before this
    # Readings before this are shown but never count (the change settles).
    settles_at = models.DateTimeField(null=True, blank=True)
    # The kind's GuardSplit (actions/kinds/base.py) as a dict: the changed pods judged
    # against the others; {} for a fleet-wide change (judged by its trend).
    split = models.JSONField(default=dict, blank=True)
    ends_at = models.DateTimeField()
    interval_seconds = models.PositiveIntegerField()
    verdict = models.CharField(
        max_length=10, choices=GuardVerdict.choices, default=GuardVerdict.WATCHING
    )
    verdict_reason = models.CharField(max_length=1000, blank=True)
    # What the console wrote in the text fields above, as message ids and parameters
    # (console/texts/): {field: parts}; worded in the reader's language when read.
    texts = models.JSONField(null=True, blank=True, verbose_name=_("texts"))
    signals = models.JSONField(default=list)
    evaluations = models.PositiveIntegerField(default=0)
    unknown_evaluations = models.PositiveIntegerField(default=0)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    outcome = models.CharField(
        max_length=16, choices=GuardOutcome.choices, blank=True, default=GuardOutcome.NONE
    )
    undo_run = models.ForeignKey(
        "actions.ActionRun",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "runbooks_guardwatch"  # kept from runbooks (no data moved)
        verbose_name = _("guard watch")
        verbose_name_plural = _("guard watches")
        ordering = ["-changed_at", "-id"]
        indexes = [models.Index(fields=["verdict", "ends_at"])]

    def __str__(self) -> str:
        return f"guard #{self.pk} on {self.subject} ({self.verdict})"

    @property
    def is_watching(self) -> bool:
        return self.verdict == GuardVerdict.WATCHING
