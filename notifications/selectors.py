"""Reads shared by the deliveries page and the API."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from console.bounds import parse_id
from notifications.models import Delivery, DeliveryStatus, Rule, Target


@dataclass(frozen=True)
class DeliveryFilters:
    status: str = ""
    event: str = ""
    target: int | None = None
    incident: int | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, object]) -> DeliveryFilters:
        status = str(params.get("status") or "").strip()
        event = str(params.get("event") or "").strip()
        return cls(
            status=status if status in DeliveryStatus.values else "",
            event=event,
            target=parse_id(params.get("target")),
            incident=parse_id(params.get("incident")),
        )


def delivery_list(*, filters: DeliveryFilters = DeliveryFilters()) -> QuerySet[Delivery]:
    rows = Delivery.objects.select_related("target", "incident", "rule").defer("body")
    if filters.status:
        rows = rows.filter(status=filters.status)
    if filters.event:
        rows = rows.filter(event=filters.event)
    if filters.target is not None:
        rows = rows.filter(target_id=filters.target)
    if filters.incident is not None:
        rows = rows.filter(incident_id=filters.incident)
    return rows.order_by("-created_at", "-id")


@dataclass(frozen=True)
class Overview:
    """What the page says above the list: is anything set up, and is anything wrong."""

    targets: int
    enabled_targets: int
    rules: int
    failed_last_day: int
    not_queued: int
    retrying: int


def delivery_overview() -> Overview:
    since = timezone.now() - timedelta(days=1)
    targets = Target.objects.aggregate(
        total=Count("pk"), enabled=Count("pk", filter=Q(enabled=True))
    )
    deliveries = Delivery.objects.aggregate(
        failed=Count("pk", filter=Q(status=DeliveryStatus.FAILED, updated_at__gte=since)),
        pending=Count("pk", filter=Q(status=DeliveryStatus.PENDING)),
        retrying=Count("pk", filter=Q(status=DeliveryStatus.RETRYING)),
    )
    return Overview(
        targets=targets["total"],
        enabled_targets=targets["enabled"],
        rules=Rule.objects.filter(enabled=True).count(),
        failed_last_day=deliveries["failed"],
        not_queued=deliveries["pending"],
        retrying=deliveries["retrying"],
    )


def target_choices() -> list[tuple[int, str]]:
    return list(Target.objects.order_by("name").values_list("pk", "name"))
