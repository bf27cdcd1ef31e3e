"""Heartbeats (dead-man's switches): a source that must check in every interval. One
per Alertmanager replica for its Watchdog alert (told apart by externalURL), any
number of HTTP sources, and the console's own worker queues and beat."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class HeartbeatKind(models.TextChoices):
    HTTP = "http", _("HTTP check-in")
    WATCHDOG = "watchdog", _("Alertmanager Watchdog")
    CONSOLE = "console", _("The console's own health")


class HeartbeatState(models.TextChoices):
    WAITING = "waiting", _("Never seen")
    OK = "ok", _("Beating")
    MISSING = "missing", _("Missing")


class Heartbeat(models.Model):
    slug = models.SlugField(_("slug"), max_length=100, unique=True)
    name = models.CharField(_("name"), max_length=200)
    kind = models.CharField(_("kind"), max_length=8, choices=HeartbeatKind.choices)
    # watchdog: the replica's externalURL; console: "worker:<queue>" or "beat".
    source = models.CharField(_("source"), max_length=500, blank=True)
    team = models.ForeignKey(
        "pager.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="heartbeats"
    )
    # HTTP check-ins: SHA-256 of the token (shown once when made), compared in constant time.
    token_hash = models.CharField(max_length=64, blank=True, editable=False)
    interval_seconds = models.PositiveIntegerField(_("expected every (seconds)"), default=300)
    grace_seconds = models.PositiveIntegerField(_("grace (seconds)"), default=60)
    enabled = models.BooleanField(_("enabled"), default=True)
    last_seen_at = models.DateTimeField(_("last seen"), null=True, blank=True)
    state = models.CharField(
        max_length=8, choices=HeartbeatState.choices, default=HeartbeatState.WAITING
    )
    missing_since = models.DateTimeField(null=True, blank=True)
    # The incident opened while it is missing (resolved when it beats again).
    incident = models.ForeignKey(
        "incidents.Incident", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("heartbeat")
        verbose_name_plural = _("heartbeats")
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "source"],
                condition=~models.Q(kind="http"),
                name="pager_heartbeat_source",
            )
        ]

    def __str__(self) -> str:
        return self.name
