"""Stage 6, write, on SQLite (`make run`): the same statements as write_postgres.py
(write.Writer), through the ORM. No repeat fast path: the full path does the same work.
"""

from collections.abc import Sequence
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


def alerts_for_update(
    *,
    fingerprints: Sequence[str],
    first: datetime,
    last: datetime,
    groups: Sequence[str],
    orphans_since: datetime,
) -> list[AlertRow]:
    known = models.Q(fingerprint__in=fingerprints, starts_at__gte=first, starts_at__lte=last)
    orphan = models.Q(
        incident__isnull=True, grouping_key__in=groups, last_received_at__gte=orphans_since
    )
    rows = Alert.objects.select_for_update().filter(known | orphan).order_by("pk")
    return [AlertRow(*values) for values in rows.values_list(*ALERT_READ_COLUMNS)]


def incidents_for_update(
    *, ids: Sequence[int], groups: Sequence[str], resolved_since: datetime
) -> list[Incident]:
    q = models.Q(pk__in=ids) | models.Q(grouping_key__in=groups, status__in=OPEN_STATUSES)
    q |= models.Q(grouping_key__in=groups, resolved_at__gte=resolved_since)
    return list(Incident.objects.select_for_update().filter(q).order_by("pk"))


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


def receipt_insert(receipt: WebhookReceipt) -> int:
    receipt.save(force_insert=True)
    return int(receipt.pk)
