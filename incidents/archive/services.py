"""Archive resolved incidents' alerts and timeline out of the hot tables, and restore them.

Archiving is the one way rows leave the append-only timeline (console/append_only.py), so
every run is audited (console.audit: a row when it starts, naming the rule, and one when
it ends, with what it moved) and leaves a line on each incident's timeline. The work goes
in chunks, each its own transaction holding its incidents' row locks: a chunk moves all
of an incident or nothing, a crash loses nothing, and a run can stop at any chunk. Nothing
here calls out of the database.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy, gettext_noop

from console.audit.models import AuditKind
from console.audit.services import audit_record
from console.errors import DomainError
from console.permissions import require
from console.surface import current_surface
from console.texts import Msg, msg
from incidents.archive.moves import Moved, archive_back, archive_out
from incidents.archive.selectors import archivable
from incidents.models import (
    ArchiveBatch,
    ArchiveMethod,
    Incident,
    IncidentArchive,
    TimelineEvent,
    TimelineEventType,
)
from incidents.texts import event_say

ARCHIVE_PERM = "incidents.archive_incidents"
RESTORE_PERM = "incidents.restore_incidents"
CHUNK = 500
# Alertmanager re-sends a resolved group for a while; well past that, an incident is history.
MIN_DAYS = 7
RESTORE_MAX = 10_000  # incidents per restore request; a larger one is a batch restore


@dataclass(frozen=True)
class RestoreResult:
    incidents: int
    alerts: int
    events: int
    alerts_kept: int


def _require(actor: User | None, method: str, perm: str, what: Promise) -> None:
    """A person needs `perm`; retention and the management command act as the console."""
    if actor is not None or method in (ArchiveMethod.PAGE, ArchiveMethod.API):
        require(actor, perm, what)


def _audit(kind: str, method: str, actor: User | None, reason: str, new: dict[str, Any]) -> None:
    audit_record(
        kind=kind,
        method=method,
        user=actor,
        username="" if actor else "console",
        reason=reason,
        new=new,
    )


def _check_days(days: int) -> None:
    if days < MIN_DAYS:
        raise DomainError(
            gettext_noop(
                "Archive incidents resolved at least %(min)s days ago; %(days)s days is too "
                "recent (Alertmanager may still re-send their alerts)."
            ),
            code="invalid",
            params={"min": MIN_DAYS, "days": days},
        )


def incidents_archive(
    *,
    older_than_days: int,
    actor: User | None,
    method: str,
    limit: int | None = None,
    chunk: int = CHUNK,
    now: datetime | None = None,
) -> ArchiveBatch:
    """Archive every incident `archivable` names (resolved more than `older_than_days`
    ago), at most `limit`. A person needs the archive permission; retention and the
    management command act as the console (actor None)."""
    _require(actor, method, ARCHIVE_PERM, gettext_lazy("archive incidents"))
    _check_days(older_than_days)
    now = now or timezone.now()
    cutoff = now - timedelta(days=older_than_days)
    with transaction.atomic():
        batch = ArchiveBatch.objects.create(
            created_at=now,
            created_by=actor,
            method=method,
            older_than_days=older_than_days,
            cutoff=cutoff,
        )
        _audit(
            AuditKind.ARCHIVED,
            method,
            actor,
            f"archive batch {batch.pk}: incidents resolved before {cutoff.isoformat()}",
            {"batch": batch.pk, "older_than_days": older_than_days},
        )
    last, done = 0, 0
    while limit is None or done < limit:
        size = chunk if limit is None else min(chunk, limit - done)
        ids = list(archivable(cutoff).filter(pk__gt=last).values_list("pk", flat=True)[:size])
        if not ids:
            break
        last = ids[-1]
        done += _archive_chunk(batch, ids, cutoff, now)
    batch.refresh_from_db()
    batch.finished_at = timezone.now()
    batch.save(update_fields=["finished_at"])
    _audit(
        AuditKind.ARCHIVED,
        method,
        actor,
        (
            f"archive batch {batch.pk} done: {batch.incidents} incidents, "
            f"{batch.alerts} alerts, {batch.events} timeline entries"
        ),
        {
            "batch": batch.pk,
            "incidents": batch.incidents,
            "alerts": batch.alerts,
            "events": batch.events,
        },
    )
    return batch


@transaction.atomic
def _archive_chunk(batch: ArchiveBatch, ids: Sequence[int], cutoff: datetime, now: datetime) -> int:
    # Checked again under the lock: one reopened, commanded or given a postmortem since the
    # list was read stays; one another run holds is skipped.
    locked = list(
        archivable(cutoff)
        .filter(pk__in=ids)
        .select_for_update(skip_locked=True, of=("self",))
        .values_list("pk", flat=True)
    )
    moved = archive_out(locked, batch.pk, now.isoformat())
    if not locked:
        return 0
    Incident.objects.filter(pk__in=locked).update(archived_at=now)
    counts = IncidentArchive.objects.filter(incident_id__in=locked).values_list(
        "incident_id", "alerts", "events"
    )
    _timeline(
        [
            (
                pk,
                msg(
                    "incidents.archived",
                    alerts=alerts,
                    events=events,
                    batch=batch.pk,
                    days=batch.older_than_days,
                ),
                {"batch": batch.pk, "alerts": alerts, "events": events},
            )
            for pk, alerts, events in counts
        ],
        TimelineEventType.ARCHIVED,
        batch.created_by,
        now,
    )
    ArchiveBatch.objects.filter(pk=batch.pk).update(
        incidents=F("incidents") + moved.incidents,
        alerts=F("alerts") + moved.alerts,
        events=F("events") + moved.events,
    )
    return moved.incidents


def _timeline(
    lines: Iterable[tuple[int, Msg, dict[str, Any]]],
    kind: str,
    actor: User | None,
    now: datetime,
) -> None:
    """One line per incident, in one INSERT. Not announced (timeline_appended): years-old
    incidents moving to the archive are not news for chat threads or notification rules."""
    events = []
    for pk, said, payload in lines:
        event = TimelineEvent(
            incident_id=pk,
            kind=kind,
            occurred_at=now,
            actor=actor,
            source="system" if actor is None else current_surface(),
            payload=payload,
        )
        event_say(event, said)
        events.append(event)
    TimelineEvent.objects.bulk_create(events)


def incidents_restore(
    *,
    actor: User | None,
    method: str,
    incident_ids: Sequence[int] = (),
    batch_id: int | None = None,
    chunk: int = CHUNK,
) -> RestoreResult:
    """Bring archived incidents back whole: the named ones, or every one left in a batch."""
    _require(actor, method, RESTORE_PERM, gettext_lazy("restore archived incidents"))
    if batch_id is not None:
        if not ArchiveBatch.objects.filter(pk=batch_id).exists():
            raise DomainError(
                gettext_noop("There is no archive batch %(batch)s."),
                code="not_found",
                params={"batch": batch_id},
            )
        ids = list(
            IncidentArchive.objects.filter(batch_id=batch_id)
            .order_by("incident_id")
            .values_list("incident_id", flat=True)
        )
    else:
        wanted = sorted({int(i) for i in incident_ids})
        if not wanted:
            raise DomainError(
                gettext_noop("Name the incidents or the batch to restore."), code="invalid"
            )
        if len(wanted) > RESTORE_MAX:
            raise DomainError(
                gettext_noop("Restore at most %(max)s incidents at once, or a whole batch."),
                code="invalid",
                params={"max": RESTORE_MAX},
            )
        ids = list(
            IncidentArchive.objects.filter(incident_id__in=wanted).values_list(
                "incident_id", flat=True
            )
        )
        missing = sorted(set(wanted) - set(ids))
        if missing:
            raise DomainError(
                gettext_noop("These incidents are not archived: %(ids)s."),
                code="not_archived",
                params={"ids": ", ".join(f"#{i}" for i in missing[:20])},
            )
    total = RestoreResult(0, 0, 0, 0)
    for start in range(0, len(ids), chunk):
        moved = _restore_chunk(ids[start : start + chunk], actor)
        total = RestoreResult(
            total.incidents + moved.incidents,
            total.alerts + moved.alerts,
            total.events + moved.events,
            total.alerts_kept + moved.alerts_kept,
        )
    _audit(
        AuditKind.RESTORED,
        method,
        actor,
        (
            f"restored {total.incidents} incidents"
            + (f" of archive batch {batch_id}" if batch_id is not None else "")
            + f": {total.alerts} alerts, {total.events} timeline entries"
        ),
        {
            "batch": batch_id,
            "incidents": ids[:100],
            "count": total.incidents,
            "alerts": total.alerts,
            "events": total.events,
            "alerts_kept": total.alerts_kept,
        },
    )
    return total


@transaction.atomic
def _restore_chunk(ids: Sequence[int], actor: User | None) -> Moved:
    locked = list(
        Incident.objects.filter(pk__in=ids, archived_at__isnull=False)
        .select_for_update(of=("self",))
        .values_list("pk", flat=True)
    )
    archived = {
        pk: (batch, alerts, events)
        for pk, batch, alerts, events in IncidentArchive.objects.filter(
            incident_id__in=locked
        ).values_list("incident_id", "batch_id", "alerts", "events")
    }
    locked = [pk for pk in locked if pk in archived]
    moved = archive_back(locked)
    Incident.objects.filter(pk__in=locked).update(archived_at=None)
    now = timezone.now()
    _timeline(
        [
            (
                pk,
                msg("incidents.restored", batch=batch, alerts=alerts, events=events),
                {"batch": batch, "alerts": alerts, "events": events},
            )
            for pk, (batch, alerts, events) in archived.items()
        ],
        TimelineEventType.RESTORED,
        actor,
        now,
    )
    for batch, count in Counter(batch for batch, _, _ in archived.values()).items():
        ArchiveBatch.objects.filter(pk=batch).update(restored=F("restored") + count)
    return moved


def retention_run(*, now: datetime | None = None) -> ArchiveBatch | None:
    """The beat's daily run: archive what `RETENTION_RESOLVED_DAYS` says (0: keep forever)."""
    days = int(settings.RETENTION_RESOLVED_DAYS or 0)
    if days <= 0:
        return None
    return incidents_archive(
        older_than_days=days, actor=None, method=ArchiveMethod.RETENTION, now=now
    )
