"""The console app's own rows: worker liveness, sign-in (the audit log, single sign-on
links, API tokens) and each user's language and time preference; in their own modules,
imported here so Django sees them."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from console.api_tokens.models import ApiToken
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from console.oidc.models import OidcIdentity
from console.preferences.models import UserPreference
from console.usernames.models import UsernameKey


class WorkerHeartbeat(models.Model):
    """One row per Celery worker (by hostname), refreshed every few seconds while its
    consumer runs. Nothing else proves a worker is alive: a queued message just waits."""

    hostname = models.CharField(max_length=255, unique=True, verbose_name=_("hostname"))
    pid = models.PositiveIntegerField(verbose_name=_("PID"))
    started_at = models.DateTimeField(
        help_text=_("When this worker last started consuming."), verbose_name=_("started at")
    )
    last_seen = models.DateTimeField(
        db_index=True, help_text=_("Its latest heartbeat."), verbose_name=_("last seen")
    )
    stopped_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text=_("Set when the worker shut down cleanly."),
        verbose_name=_("stopped at"),
    )
    # Which worker runs actions and which only deliveries (console.liveness). A database
    # default: a worker of the previous release still inserts rows during a rollout.
    queues = models.CharField(
        max_length=255,
        blank=True,
        default="",
        db_default="",
        help_text=_("The queues it consumes, comma-separated; empty: not recorded (every queue)."),
        verbose_name=_("queues"),
    )

    class Meta:
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")
        ordering = ("-last_seen",)

    def __str__(self) -> str:
        return self.hostname


__all__ = [
    "ApiToken",
    "AuditEvent",
    "AuditKind",
    "AuditMethod",
    "OidcIdentity",
    "UserPreference",
    "UsernameKey",
    "WorkerHeartbeat",
]
