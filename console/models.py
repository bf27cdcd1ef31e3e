"""The console app's own rows: worker liveness, sign-in (the audit log, single sign-on
links) and each user's language and time preference; in their own modules, imported here
so Django sees them."""

from django.db import models

from console.audit_models import AuditEvent, AuditKind, AuditMethod
from console.oidc_models import OidcIdentity
from console.preferences_models import UserPreference


class WorkerHeartbeat(models.Model):
    """One row per Celery worker (by hostname), refreshed every few seconds while its
    consumer runs. Nothing else proves a worker is alive: a queued message just waits."""

    hostname = models.CharField(max_length=255, unique=True)
    pid = models.PositiveIntegerField()
    started_at = models.DateTimeField(help_text="When this worker last started consuming.")
    last_seen = models.DateTimeField(db_index=True, help_text="Its latest heartbeat.")
    stopped_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when the worker shut down cleanly."
    )

    class Meta:
        ordering = ("-last_seen",)

    def __str__(self) -> str:
        return self.hostname


__all__ = [
    "AuditEvent",
    "AuditKind",
    "AuditMethod",
    "OidcIdentity",
    "UserPreference",
    "WorkerHeartbeat",
]
