"""Reads shared by the pages and the API, each a fixed number of queries."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Count, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from console.bounds import parse_id
from console.errors import NotFound
from incidents.models import (
    Alert,
    AlertmanagerState,
    AlertStatus,
    Incident,
    IncidentStatus,
    Severity,
    TimelineEvent,
    WebhookReceipt,
)

MAX_QUERY_CHARS = 200


@dataclass(frozen=True)
class IncidentFilters:
    status: str = ""  # a status, "open" (anything not resolved) or "" for all
    severity: str = ""
    runbook: str = ""
    q: str = ""

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> "IncidentFilters":
        status = (params.get("status") or "").strip()
        if status not in {*IncidentStatus.values, "open", ""}:
            status = ""
        severity = (params.get("severity") or "").strip().upper()
        if severity not in Severity.values:
            severity = ""
        return cls(
            status=status,
            severity=severity,
            runbook=(params.get("runbook") or "").strip()[:100],
            q=(params.get("q") or "").strip()[:MAX_QUERY_CHARS],
        )

    def is_empty(self) -> bool:
        return not (self.status or self.severity or self.runbook or self.q)


# Firing alerts Alertmanager holds back: shown as such, not as firing.
_SUPPRESSED = (AlertmanagerState.SILENCED, AlertmanagerState.INHIBITED)
_NOT_SUPPRESSED = [s for s in AlertmanagerState.values if s not in _SUPPRESSED]


def _suppressed_count(state: str) -> Count:
    return Count(
        "alerts",
        filter=Q(alerts__status=AlertStatus.FIRING, alerts__am_state=state),
        distinct=True,
    )


def _alerts_counted(alerts: QuerySet[Alert]) -> Coalesce:
    n = alerts.filter(incident=OuterRef("pk")).order_by().values("incident")
    return Coalesce(Subquery(n.annotate(n=Count("*")).values("n")), 0)


def incident_list(*, filters: IncidentFilters) -> QuerySet[Incident]:
    # Counted per incident shown, not joined and grouped over every incident: a page
    # costs the same at 100k incidents as at 1k (tests/bench/incident_pages.py).
    firing = Alert.objects.filter(status=AlertStatus.FIRING)
    qs = Incident.objects.select_related("commander").annotate(
        alert_count=_alerts_counted(Alert.objects.all()),
        # Firing and not held back by Alertmanager, as last reconciled (alertmanager_view).
        firing_count=_alerts_counted(firing.exclude(am_state__in=_SUPPRESSED)),
        silenced_count=_alerts_counted(firing.filter(am_state=AlertmanagerState.SILENCED)),
        inhibited_count=_alerts_counted(firing.filter(am_state=AlertmanagerState.INHIBITED)),
    )
    if filters.status == "open":
        qs = qs.exclude(status=IncidentStatus.RESOLVED)
    elif filters.status:
        qs = qs.filter(status=filters.status)
    if filters.severity:
        qs = qs.filter(severity=filters.severity)
    if filters.runbook:
        qs = qs.filter(runbook=filters.runbook)
    if filters.q:
        text = filters.q
        match = Q(title__icontains=text) | Q(namespace__icontains=text) | Q(runbook__icontains=text)
        if (incident_id := parse_id(text)) is not None:
            match |= Q(pk=incident_id)
        qs = qs.filter(match)
    return qs.order_by("-triggered_at", "-id")


# One index probe per distinct runbook (a "loose index scan" on the runbook index), where
# DISTINCT reads every incident's entry.
_RUNBOOKS = """
WITH RECURSIVE slugs(runbook) AS (
    SELECT min(runbook) FROM incidents_incident WHERE runbook > ''
    UNION ALL
    SELECT (SELECT min(i.runbook) FROM incidents_incident i WHERE i.runbook > slugs.runbook)
    FROM slugs WHERE slugs.runbook IS NOT NULL
)
SELECT runbook FROM slugs WHERE runbook IS NOT NULL ORDER BY runbook
"""


def incident_runbooks() -> list[str]:
    """Runbook slugs that appear on incidents, for the filter menu."""
    with connection.cursor() as cursor:
        cursor.execute(_RUNBOOKS)
        return [slug for (slug,) in cursor.fetchall()]


def _missing(incident_id: int) -> NotFound:
    return NotFound(f"Incident #{incident_id} does not exist.")


def incident_get(*, incident_id: int) -> Incident:
    """The incident with its commander and alert counts. A missing one raises NotFound:
    the API answers it 404, a page the 404 page, a service's caller as any refusal."""
    incident = (
        Incident.objects.select_related("commander")
        .annotate(
            alert_count=Count("alerts", distinct=True),
            firing_count=Count(
                "alerts",
                filter=Q(alerts__status=AlertStatus.FIRING)
                & (Q(alerts__am_state__isnull=True) | Q(alerts__am_state__in=_NOT_SUPPRESSED)),
                distinct=True,
            ),
            silenced_count=_suppressed_count(AlertmanagerState.SILENCED),
            inhibited_count=_suppressed_count(AlertmanagerState.INHIBITED),
            # When Alertmanager was last asked about its alerts, and last answered.
            am_asked_at=Max("alerts__am_asked_at"),
            am_checked_at=Max("alerts__am_checked_at"),
        )
        .filter(pk=incident_id)
        .first()
    )
    if incident is None:
        raise _missing(incident_id)
    return incident


def incident_for_update(*, incident_id: int) -> Incident:
    """The incident row locked until the transaction ends (no counts: PostgreSQL locks no
    aggregate); NotFound when there is none."""
    incident = Incident.objects.select_for_update().filter(pk=incident_id).first()
    if incident is None:
        raise _missing(incident_id)
    return incident


def incidents_lock(*, incident_ids: Sequence[int]) -> set[int]:
    """Lock these incidents' rows until the transaction ends, in primary-key order (as
    ingestion locks them, so the two cannot deadlock); the ids that exist."""
    if not incident_ids:
        return set()
    qs = Incident.objects.select_for_update().filter(pk__in=incident_ids).order_by("pk")
    return set(qs.values_list("pk", flat=True))


def incident_alerts(*, incident_id: int) -> QuerySet[Alert]:
    # Firing first ("firing" < "resolved"), then most recent.
    return Alert.objects.filter(incident_id=incident_id).order_by("status", "-starts_at", "id")


def incident_timeline(*, incident_id: int, after_id: int | None = None) -> QuerySet[TimelineEvent]:
    qs = TimelineEvent.objects.filter(incident_id=incident_id).select_related("actor")
    if after_id:
        qs = qs.filter(pk__gt=after_id)
    return qs.order_by("occurred_at", "id")


def webhook_receipt_list(*, outcome: str = "") -> QuerySet[WebhookReceipt]:
    qs = WebhookReceipt.objects.defer("body", "body_raw").order_by("-received_at", "-id")
    if outcome == "dead":
        qs = qs.filter(outcome__in=("rejected", "failed"))
    elif outcome:
        qs = qs.filter(outcome=outcome)
    return qs


def webhook_receipt_get(*, receipt_id: int) -> WebhookReceipt | None:
    return WebhookReceipt.objects.select_related("replay_of").filter(pk=receipt_id).first()


def webhook_receipt_replays(*, receipt_id: int) -> list[WebhookReceipt]:
    return list(
        WebhookReceipt.objects.filter(replay_of_id=receipt_id)
        .defer("body", "body_raw")
        .order_by("-received_at", "-id")
    )


def commander_candidates() -> QuerySet[User]:
    """Active users who may command (hold incidents.take_command), in one query."""
    perm = {"codename": "take_command", "content_type__app_label": "incidents"}
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(
            Q(is_superuser=True)
            | Q(**{f"user_permissions__{k}": v for k, v in perm.items()})
            | Q(**{f"groups__permissions__{k}": v for k, v in perm.items()})
        )
        .distinct()
        .order_by("username")
        .only("id", "username", "first_name", "last_name")
    )
