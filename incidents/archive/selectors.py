"""Which incidents retention may archive, and what the archive holds (read-only)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Exists, Model, OuterRef, Q, QuerySet
from django.db.models.deletion import PROTECT

from incidents.models import (
    Alert,
    AlertStatus,
    ArchiveBatch,
    Incident,
    IncidentArchive,
    IncidentStatus,
)


def _protected_by() -> list[tuple[type[Model], str]]:
    """(model, field) of every row that protects an incident from deletion: a postmortem,
    an action item, an action run, a guard watch, a drill run. Found from the relations
    rather than named, since incidents imports none of those apps; such an incident stays
    whole in the hot tables, because what refers to it quotes its alerts and timeline."""
    return [
        (rel.related_model, rel.field.name)
        for rel in Incident._meta.related_objects
        if rel.on_delete is PROTECT and rel.related_model is not IncidentArchive
    ]


def archivable(cutoff: datetime) -> QuerySet[Incident]:
    """Resolved before `cutoff`, not archived, not demo history, no alert still firing and
    nothing that protects it (above)."""
    qs = Incident.objects.filter(
        status=IncidentStatus.RESOLVED,
        resolved_at__lt=cutoff,
        archived_at__isnull=True,
        is_demo=False,
    ).exclude(Exists(Alert.objects.filter(incident=OuterRef("pk"), status=AlertStatus.FIRING)))
    for model, field in _protected_by():
        qs = qs.exclude(Exists(model._default_manager.filter(**{field: OuterRef("pk")})))
    return qs.order_by("pk")


def archive_batches() -> QuerySet[ArchiveBatch]:
    return ArchiveBatch.objects.select_related("created_by").order_by("-created_at", "-id")


def archived_incidents(*, batch_id: int | None = None, q: str = "") -> QuerySet[IncidentArchive]:
    """Archived incidents, newest archive first; `q` an id (#123 or 123) or words of the title."""
    qs = IncidentArchive.objects.select_related("incident", "batch").defer("rows")
    if batch_id is not None:
        qs = qs.filter(batch_id=batch_id)
    q = q.strip().lstrip("#")
    if q.isdigit():
        qs = qs.filter(incident_id=int(q))
    elif q:
        qs = qs.filter(Q(incident__title__icontains=q) | Q(incident__namespace=q))
    return qs.order_by("-archived_at", "-incident_id")


def archive_of(incident_id: int) -> IncidentArchive | None:
    return (
        IncidentArchive.objects.select_related("batch")
        .defer("rows")
        .filter(incident_id=incident_id)
        .first()
    )
