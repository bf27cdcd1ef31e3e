"""Action runs (the one row that is the truth about a remediation), their append-only
audit log, and the ConfigMap revisions we keep because ConfigMaps have no history.
Django finds an app's models here: the guard's (actions/guard/models.py) are imported below.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from actions.guard.models import GuardWatch  # noqa: F401  (registered with the app)
from console.append_only import AppendOnlyModel


class ActionRunStatus(models.TextChoices):
    AWAITING_APPROVAL = "awaiting_approval", _("Awaiting approval")
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")
    REJECTED = "rejected", _("Rejected")


# A run's status inside a sentence ("... #12 scale_lws, queued, ..."), lazy: a refusal
# says it in English to the API and in the page's language to a page.
_STATUS_WORDS: dict[str, Promise] = {
    "awaiting_approval": pgettext_lazy("action run status in a sentence", "awaiting approval"),
    "queued": pgettext_lazy("action run status in a sentence", "queued"),
    "running": pgettext_lazy("action run status in a sentence", "running"),
    "succeeded": pgettext_lazy("action run status in a sentence", "succeeded"),
    "failed": pgettext_lazy("action run status in a sentence", "failed"),
    "cancelled": pgettext_lazy("action run status in a sentence", "cancelled"),
    "rejected": pgettext_lazy("action run status in a sentence", "rejected"),
}


def run_status_word(status: str) -> str | Promise:
    return _STATUS_WORDS.get(status, status.replace("_", " "))


def run_status_label(status: str) -> str:
    """A status as the run's badge names it ("Queued"), in the active language; an id this
    version does not know, as stored."""
    try:
        return str(ActionRunStatus(status).label)
    except ValueError:
        return status


ACTIVE_STATUSES = (
    ActionRunStatus.AWAITING_APPROVAL,
    ActionRunStatus.QUEUED,
    ActionRunStatus.RUNNING,
)
FINAL_STATUSES = tuple(s for s in ActionRunStatus if s not in ACTIVE_STATUSES)


class ActionRun(models.Model):
    """One requested change to one Kubernetes object.

    `target` is the lock key the kind derives from its parameters ("leaderworkerset/ns/name",
    "node/gpu-node-3", ...): the partial unique constraint allows one active run per target,
    whichever process or machine asks. `(requested_by, idempotency_key)` makes a double
    click, or a retried API call, the same run.
    """

    incident = models.ForeignKey(
        "incidents.Incident",
        on_delete=models.PROTECT,
        related_name="action_runs",
        verbose_name=_("incident"),
    )
    kind = models.CharField(max_length=32, db_index=True, verbose_name=_("kind"))
    target = models.CharField(max_length=255, verbose_name=pgettext_lazy("action run", "target"))
    params = models.JSONField(default=dict, verbose_name=_("parameters"))
    idempotency_key = models.CharField(max_length=100, verbose_name=_("idempotency key"))
    status = models.CharField(
        max_length=20,
        choices=ActionRunStatus.choices,
        default=ActionRunStatus.QUEUED,
        verbose_name=_("status"),
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("requested by"),
    )
    requested_at = models.DateTimeField(verbose_name=_("requested at"))
    requires_approval = models.BooleanField(default=False, verbose_name=_("requires approval"))
    approval_reason = models.CharField(
        max_length=300, blank=True, verbose_name=_("approval reason")
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("decided at"))
    decision_note = models.CharField(max_length=500, blank=True, verbose_name=_("decision note"))
    queued_at = models.DateTimeField(null=True, blank=True, verbose_name=_("queued at"))
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("started at"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))
    # The preview the requester (and the approver) saw: plan dict + dry-run result or error.
    preview = models.JSONField(default=dict, blank=True, verbose_name=_("preview"))
    # Execution record: snapshots carry resourceVersion; `plan` is what the worker wrote.
    before = models.JSONField(null=True, blank=True, verbose_name=_("before"))
    plan = models.JSONField(null=True, blank=True, verbose_name=_("plan"))
    after = models.JSONField(null=True, blank=True, verbose_name=_("after"))
    verification = models.CharField(max_length=500, blank=True, verbose_name=_("verification"))
    # "" until the worker claims the run; "applying" from just before the write.
    phase = models.CharField(max_length=16, blank=True, verbose_name=_("phase"))
    attempts = models.PositiveSmallIntegerField(default=0, verbose_name=_("attempts"))
    claimed_by = models.CharField(max_length=200, blank=True, verbose_name=_("claimed by"))
    lease_expires_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("lease expires at")
    )
    error = models.TextField(blank=True, verbose_name=_("error"))
    error_code = models.CharField(max_length=32, blank=True, verbose_name=_("error code"))
    # What the console wrote in the text fields above, as message ids and parameters
    # (console/texts/): {field: parts}; worded in the reader's language when read.
    texts = models.JSONField(null=True, blank=True, verbose_name=_("texts"))
    undo_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="undos",
        verbose_name=_("undo of"),
    )
    runbook = models.CharField(max_length=100, blank=True, verbose_name=_("runbook"))
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "runbooks_actionrun"  # kept from runbooks (no data moved)
        verbose_name = _("action run")
        verbose_name_plural = _("action runs")
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["target"],
                condition=Q(status__in=[s.value for s in ACTIVE_STATUSES]),
                name="action_run_one_active_per_target",
            ),
            models.UniqueConstraint(
                fields=["requested_by", "idempotency_key"],
                name="action_run_idempotency_key_per_user",
            ),
        ]
        indexes = [
            models.Index(fields=["incident", "requested_at"]),
            models.Index(fields=["status", "requested_at"]),
        ]
        permissions = [
            ("request_actionrun", "Can request a remediation action"),
            ("approve_actionrun", "Can approve or reject another person's action"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} on {self.target} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    def blocking_undo(self) -> ActionRun | None:
        """An undo of this run that is under way or done (a failed, cancelled or rejected
        one does not count). Reads `undos.all()`, so a prefetch serves it."""
        ended = (ActionRunStatus.FAILED, ActionRunStatus.CANCELLED, ActionRunStatus.REJECTED)
        return next((u for u in self.undos.all() if u.status not in ended), None)


class ActionRunEvent(AppendOnlyModel):
    """Audit: every state change of a run, who did it and what was known. Append-only."""

    run = models.ForeignKey(
        ActionRun, on_delete=models.PROTECT, related_name="events", verbose_name=_("run")
    )
    occurred_at = models.DateTimeField(verbose_name=_("occurred at"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("actor"),
    )
    status_from = models.CharField(max_length=20, blank=True, verbose_name=_("status from"))
    status_to = models.CharField(max_length=20, blank=True, verbose_name=_("status to"))
    message = models.TextField(verbose_name=_("message"))
    payload = models.JSONField(default=dict, blank=True, verbose_name=_("payload"))

    class Meta:
        db_table = "runbooks_actionrunevent"  # kept from runbooks (no data moved)
        verbose_name = _("action run event")
        verbose_name_plural = _("action run events")
        ordering = ["occurred_at", "id"]
        indexes = [models.Index(fields=["run", "occurred_at", "id"])]

    def __str__(self) -> str:
        return f"run #{self.run_id} {self.status_from}->{self.status_to}: {self.message[:60]}"

    @property
    def status_from_label(self) -> str:
        return run_status_label(self.status_from)

    @property
    def status_to_label(self) -> str:
        return run_status_label(self.status_to)


class ConfigRevision(AppendOnlyModel):
    """A ConfigMap's data as we saw it, stored only when it changed since the last one."""

    namespace = models.CharField(max_length=253, verbose_name=_("namespace"))
    name = models.CharField(max_length=253, verbose_name=_("name"))
    data = models.JSONField(default=dict, verbose_name=_("data"))
    resource_version = models.CharField(
        max_length=64, blank=True, verbose_name=_("resource version")
    )
    captured_at = models.DateTimeField(verbose_name=_("captured at"))
    reason = models.CharField(max_length=200, verbose_name=_("reason"))
    run = models.ForeignKey(
        ActionRun,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("run"),
    )

    class Meta:
        db_table = "runbooks_configrevision"  # kept from runbooks (no data moved)
        verbose_name = _("ConfigMap revision")
        verbose_name_plural = _("ConfigMap revisions")
        ordering = ["-captured_at", "-id"]
        indexes = [models.Index(fields=["namespace", "name", "captured_at"])]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name} r{self.pk} ({self.captured_at:%Y-%m-%d %H:%M:%S})"

    @property
    def reason_shown(self) -> str:
        """`reason` (stored in English) in the active language, when it has a shape the
        console writes (actions/revisions.py); as stored otherwise."""
        from actions.revisions import revision_reason_text  # revisions imports this module

        return revision_reason_text(self.reason)

    @property
    def reason_is_ours(self) -> bool:
        """Whether `reason` has a shape the console writes (worded in the reader's
        language); any other text came from elsewhere and is shown as data."""
        from actions.revisions import revision_reason

        return revision_reason(self.reason) is not None
