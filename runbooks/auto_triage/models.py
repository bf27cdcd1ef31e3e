"""What auto-triage still has to evaluate (runbooks/auto_triage/queue.py): one row per
incident, so a storm's openings are evaluated in batches by one task instead of one task
each, and an incident asked for twice before its turn is evaluated once."""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from incidents.models import Incident


class AutoTriageDue(models.Model):
    incident = models.OneToOneField(
        Incident, on_delete=models.CASCADE, primary_key=True, related_name="+",
        verbose_name=_("incident"),
    )  # fmt: skip
    requested_at = models.DateTimeField(_("requested at"), default=timezone.now, db_index=True)

    class Meta:
        verbose_name = _("auto-triage due")
        verbose_name_plural = _("auto-triage due")

    def __str__(self) -> str:
        return f"auto-triage due for incident {self.incident_id}"
