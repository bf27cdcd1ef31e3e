"""Teams and the part of the fleet each owns (matched by labels)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

# The labels ownership can match, and where an incident keeps each (pager/routing.py).
OWNERSHIP_LABELS = ("namespace", "lws", "model", "node_pool", "runbook")


class Team(models.Model):
    slug = models.SlugField(_("slug"), max_length=64, unique=True)
    name = models.CharField(_("name"), max_length=200)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="pager_teams", verbose_name=_("members")
    )
    escalation_policy = models.ForeignKey(
        "pager.EscalationPolicy",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("escalation policy"),
    )
    # The team's channel: a notification target (Slack, webhook or email) an escalation
    # step can page.
    channel = models.ForeignKey(
        "notifications.Target",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("channel"),
    )
    # Catches every incident no other team owns (at most one team).
    is_default = models.BooleanField(_("default team"), default=False)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("team")
        verbose_name_plural = _("teams")
        permissions = [
            ("manage_own_oncall", "Manage own contact methods and shifts"),
            ("manage_pager", "Configure teams, schedules, escalation and maintenance"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="pager_one_default_team"
            )
        ]

    def __str__(self) -> str:
        return self.name


class Ownership(models.Model):
    """One claim of a team: every label it sets must match (shell patterns, `llm-prod-*`);
    the claim that sets the most labels wins (pager/routing.py)."""

    team = models.ForeignKey(
        Team, on_delete=models.CASCADE, related_name="ownerships", verbose_name=_("team")
    )
    namespace = models.CharField(_("namespace"), max_length=253, blank=True)
    lws = models.CharField(_("LeaderWorkerSet"), max_length=253, blank=True)
    model = models.CharField(_("model"), max_length=253, blank=True)
    node_pool = models.CharField(_("node pool"), max_length=253, blank=True)
    runbook = models.CharField(_("runbook"), max_length=100, blank=True)

    class Meta:
        ordering = ["team", "pk"]
        verbose_name = _("ownership")
        verbose_name_plural = _("ownerships")

    def __str__(self) -> str:
        parts = [
            f"{label}={getattr(self, label)}" for label in OWNERSHIP_LABELS if getattr(self, label)
        ]
        return f"{self.team}: {', '.join(parts)}"

    def labels(self) -> dict[str, str]:
        return {label: getattr(self, label) for label in OWNERSHIP_LABELS if getattr(self, label)}

    def clean(self) -> None:
        if not self.labels():
            raise ValidationError(_("Set at least one label the team owns."))
