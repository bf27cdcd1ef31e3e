"""Stage 6, write, on SQLite (`make run`): the same statements as write_postgres.py
(write.Writer), through the ORM. No repeat fast path: the full path does the same work.
"""

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime

from django.db import models
from django.db.models import Count

from incidents.ingest.write import (
    ALERT_READ_COLUMNS,
    ALERT_UPDATE_COLUMNS,
    INCIDENT_UPDATE_COLUMNS,
    AlertRow,
    M,
    Row,
)
from incidents.models import OPEN_STATUSES, Alert, AlertStatus, Incident, WebhookReceipt


def repeat_apply(
    *, groups: Sequence[Row], now: datetime, orphans_since: datetime, receipt: WebhookReceipt
) -> None:
    return None


def rows_for_update(
    *,
    keys: Sequence[tuple[str, datetime]],
    groups: Sequence[str],
    orphans_since: datetime,
    resolved_since: datetime,
) -> tuple[list[AlertRow], list[Incident]]:
    starts = [s for _, s in keys]
    fingerprints = {fp for fp, _ in keys}
    known = models.Q(fingerprint__in=fingerprints, starts_at__gte=min(starts))
    known &= models.Q(starts_at__lte=max(starts))
    orphan = models.Q(
        incident__isnull=True, grouping_key__in=groups, last_received_at__gte=orphans_since
    )
    alerts = Alert.objects.select_for_update().filter(known | orphan).order_by("pk")
    rows = [AlertRow(*values) for values in alerts.values_list(*ALERT_READ_COLUMNS)]
    wanted = set(keys)
    held = {r.incident_id for r in rows if r.incident_id and (r.fingerprint, r.starts_at) in wanted}
    q = models.Q(pk__in=held) | models.Q(grouping_key__in=groups, status__in=OPEN_STATUSES)
    q |= models.Q(grouping_key__in=groups, resolved_at__gte=resolved_since)
    return rows, list(Incident.objects.select_for_update().filter(q).order_by("pk"))


def pipeline() -> AbstractContextManager[None]:
    return nullcontext()  # each statement waits for its answer (SQLite is in-process)


def models_insert(objs: Sequence[M]) -> Sequence[M]:
    if not objs:
        return objs
    return type(objs[0])._default_manager.bulk_create(objs)


def alerts_insert(rows: Sequence[Row]) -> None:
    if rows:
        Alert.objects.bulk_create([Alert(**row) for row in rows])


def alerts_update(rows: Sequence[Row]) -> None:
    if rows:
        Alert.objects.bulk_update([Alert(**row) for row in rows], list(ALERT_UPDATE_COLUMNS))


def firing_counts(incident_ids: Sequence[int]) -> dict[int, int]:
    if not incident_ids:
        return {}
    rows = (
        Alert.objects.filter(incident_id__in=incident_ids, status=AlertStatus.FIRING)
        .values("incident_id")
        .annotate(n=Count("id"))
        .values_list("incident_id", "n")
    )
    return dict(rows)


def incidents_update(incidents: Sequence[Incident]) -> None:
    if incidents:
        Incident.objects.bulk_update(list(incidents), list(INCIDENT_UPDATE_COLUMNS))


def receipt_insert(receipt: WebhookReceipt) -> None:
    receipt.save(force_insert=True)
