"""Where a resolved incident's alerts and timeline go when retention archives them.

The incident row itself stays in the hot table, marked `archived_at`: it is what
postmortems, reports, related links, audit entries and URLs refer to, and it is about a
hundredth of an incident's storage (docs/operations.md, "Retention"). Its alerts and
timeline entries, the other 99%, move into one `IncidentArchive` row (their rows as JSON,
compressed by the database) and come back unchanged, ids included, on restore.

Imported by incidents/models.py so that Django finds the models in the incidents app.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ArchiveMethod(models.TextChoices):
    RETENTION = "retention", _("Retention (scheduled)")
    COMMAND = "command", _("Management command")
    PAGE = "page", _("Archive page")
    API = "api", _("REST API")


class ArchiveBatch(models.Model):
    """One archiving run: what it took out of the hot tables, by whom, under which rule.
    Restores count against it; the batch itself is never deleted."""

    created_at = models.DateTimeField(verbose_name=_("archived at"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("archived by"),
    )
    method = models.CharField(
        max_length=16, choices=ArchiveMethod.choices, verbose_name=_("method")
    )
    older_than_days = models.PositiveIntegerField(verbose_name=_("resolved more than (days)"))
    cutoff = models.DateTimeField(verbose_name=_("resolved before"))
    incidents = models.PositiveIntegerField(default=0, verbose_name=_("incidents"))
    alerts = models.PositiveIntegerField(default=0, verbose_name=_("alerts"))
    events = models.PositiveIntegerField(default=0, verbose_name=_("timeline entries"))
    restored = models.PositiveIntegerField(default=0, verbose_name=_("restored"))

    class Meta:
        verbose_name = _("archive batch")
        verbose_name_plural = _("archive batches")
        ordering = ["-created_at", "-id"]
        permissions = [
            ("archive_incidents", "Can archive resolved incidents"),
            ("restore_incidents", "Can restore archived incidents"),
        ]

    def __str__(self) -> str:
        return f"archive batch {self.pk} ({self.incidents} incidents)"


class IncidentArchive(models.Model):
    """An archived incident's alerts and timeline entries, as their rows were. Deleted
    when the incident is restored (the rows are back in the hot tables then)."""

    incident = models.OneToOneField(
        "incidents.Incident",
        primary_key=True,
        on_delete=models.PROTECT,
        related_name="archive",
        verbose_name=_("incident"),
    )
    batch = models.ForeignKey(
        ArchiveBatch, on_delete=models.PROTECT, related_name="archived", verbose_name=_("batch")
    )
    archived_at = models.DateTimeField(verbose_name=_("archived at"))
    alerts = models.PositiveIntegerField(default=0, verbose_name=_("alerts"))
    events = models.PositiveIntegerField(default=0, verbose_name=_("timeline entries"))
    # {"alerts": [row, ...], "events": [row, ...]}: each row every column of the table by
    # its column name, so a restore writes back exactly what left.
    rows = models.JSONField(default=dict, verbose_name=_("rows"))

    class Meta:
        verbose_name = _("archived incident")
        verbose_name_plural = _("archived incidents")
        indexes = [models.Index(fields=["batch"], name="incident_archive_batch")]

    def __str__(self) -> str:
        return f"archive of incident {self.incident_id}"
