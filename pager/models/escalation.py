"""Escalation policies (ordered steps) and one escalation per incident episode, the
state the engine (pager/escalation/) advances. Every page it makes is a Page row whose
`key` is unique per incident, episode, loop, round and step: a step retried by a second
worker, a restarted beat or a redelivered task finds the row and sends nothing."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from pager.models.schedules import zone_validate


class EscalationPolicy(models.Model):
    name = models.CharField(_("name"), max_length=200, unique=True)
    team = models.ForeignKey(
        "pager.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="policies",
        verbose_name=_("team"),
    )
    # Run the steps again this many times after the last one (0: once).
    repeat_times = models.PositiveSmallIntegerField(_("repeat the policy"), default=0)
    # An acknowledgement with no progress (still acknowledged, neither mitigated nor
    # resolved) this long afterwards starts paging again. Empty: it never expires.
    ack_timeout_minutes = models.PositiveIntegerField(
        _("acknowledgement expires after (minutes)"), null=True, blank=True
    )
    # Routes the incidents no team's policy covers (at most one).
    is_default = models.BooleanField(_("default policy"), default=False)

    class Meta:
        ordering = ["name"]
        verbose_name = _("escalation policy")
        verbose_name_plural = _("escalation policies")
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="pager_one_default_policy"
            )
        ]

    def __str__(self) -> str:
        return self.name


class StepAction(models.TextChoices):
    PAGE_SCHEDULE = "page_schedule", _("Page who is on call")
    PAGE_USER = "page_user", _("Page a person")
    PAGE_CHANNEL = "page_channel", _("Post to the team's channel")
    WAIT = "wait", _("Wait")


class EscalationStep(models.Model):
    """One step. A step whose severities or hours do not include the incident (at the
    moment it is due) is skipped, and the timeline says so."""

    policy = models.ForeignKey(EscalationPolicy, on_delete=models.CASCADE, related_name="steps")
    position = models.PositiveSmallIntegerField(_("position"))
    action = models.CharField(_("action"), max_length=16, choices=StepAction.choices)
    schedule = models.ForeignKey(
        "pager.Schedule", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # page_channel: this team's channel (the policy's team when empty).
    team = models.ForeignKey(
        "pager.Team", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    wait_minutes = models.PositiveIntegerField(_("then wait (minutes)"), default=0)
    severities = models.JSONField(_("only for severities"), default=list, blank=True)
    active_from = models.TimeField(_("only from"), null=True, blank=True)
    active_until = models.TimeField(_("only until"), null=True, blank=True)
    time_zone = models.CharField(
        _("time zone"), max_length=64, default="UTC", validators=[zone_validate]
    )

    class Meta:
        ordering = ["policy", "position"]
        verbose_name = _("escalation step")
        verbose_name_plural = _("escalation steps")
        constraints = [
            models.UniqueConstraint(fields=["policy", "position"], name="pager_step_position")
        ]

    def __str__(self) -> str:
        return f"{self.policy_id}#{self.position} {self.action}"


class EscalationState(models.TextChoices):
    ACTIVE = "active", _("Escalating")
    ACKNOWLEDGED = "acknowledged", _("Acknowledged")
    SUPPRESSED = "suppressed", _("In a maintenance window")
    EXHAUSTED = "exhausted", _("Reached the last step")
    STOPPED = "stopped", _("Stopped")


class Escalation(models.Model):
    incident = models.ForeignKey(
        "incidents.Incident", on_delete=models.CASCADE, related_name="escalations"
    )
    # The incident's reopen_count when this began: a reopened incident escalates anew.
    episode = models.PositiveIntegerField(default=0)
    team = models.ForeignKey("pager.Team", null=True, on_delete=models.SET_NULL, related_name="+")
    policy = models.ForeignKey(
        EscalationPolicy, null=True, on_delete=models.SET_NULL, related_name="escalations"
    )
    state = models.CharField(
        max_length=12, choices=EscalationState.choices, default=EscalationState.ACTIVE
    )
    loop = models.PositiveSmallIntegerField(default=0)  # times the policy was repeated
    repage_round = models.PositiveSmallIntegerField(default=0)  # acknowledgements expired
    step_index = models.PositiveSmallIntegerField(default=0)  # the next step to run
    next_due_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField()
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    ack_expires_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    stop_reason = models.CharField(max_length=200, blank=True)
    maintenance = models.ForeignKey(
        "pager.MaintenanceWindow",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(fields=["incident", "episode"], name="pager_escalation_episode")
        ]
        indexes = [models.Index(fields=["state", "next_due_at"])]

    def __str__(self) -> str:
        return f"incident {self.incident_id} episode {self.episode}: {self.state}"
