"""Reads for reconciling with Alertmanager and for showing what it last said."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Q
from django.utils import timezone

from incidents.models import Alert, AlertmanagerState, AlertStatus, Incident, IncidentStatus

S = AlertmanagerState
# An alert the reconcile ended comes back if Alertmanager lists it again this soon after.
REVIVE_WITHIN = timedelta(hours=1)
# A storm's worth; the newest first, the rest next time.
MAX_ALERTS = 5000


@dataclass(frozen=True)
class Candidate:
    """A stored alert to compare with Alertmanager's view."""

    id: int
    incident_id: int
    fingerprint: str
    starts_at: datetime
    last_received_at: datetime
    am_seen_at: datetime | None


def candidates(*, incident_id: int | None = None) -> list[Candidate]:
    """Firing alerts of open incidents, and those the reconcile itself ended lately (in
    case Alertmanager lists them again), newest first; one query."""
    revivable = Q(
        status=AlertStatus.RESOLVED,
        am_state__in=(S.GONE, S.RESOLVED),
        ends_at__gte=timezone.now() - REVIVE_WITHIN,
    )
    qs = Alert.objects.filter(Q(status=AlertStatus.FIRING) | revivable).exclude(
        incident__status=IncidentStatus.RESOLVED
    )
    qs = qs.filter(incident__isnull=False)
    if incident_id is not None:
        qs = qs.filter(incident_id=incident_id)
    rows = qs.order_by("-starts_at", "-id").values_list(
        "id", "incident_id", "fingerprint", "starts_at", "last_received_at", "am_seen_at"
    )[:MAX_ALERTS]
    return [Candidate(*row) for row in rows]


@dataclass(frozen=True)
class AlertmanagerSays:
    """What the incident page shows of Alertmanager's view of one incident's alerts."""

    checked_at: datetime | None  # when Alertmanager last answered about them
    asked_at: datetime | None  # when the console last tried
    error: str  # why the last try failed (or which replica did not answer); "" if none
    firing: int  # firing, and Alertmanager says so
    silenced: int
    inhibited: int
    unlisted: int  # firing here, not listed there, not yet taken as ended
    unknown: int  # firing here, Alertmanager never asked

    @property
    def failed(self) -> bool:
        return bool(self.error) and (
            self.checked_at is None
            or (self.asked_at is not None and self.asked_at > self.checked_at)
        )


def incident_alertmanager_says(*, incident_id: int) -> AlertmanagerSays:
    """Two queries: the counts, and the last error."""
    firing = Q(status=AlertStatus.FIRING)
    totals = Alert.objects.filter(incident_id=incident_id).aggregate(
        checked_at=Max("am_checked_at"),
        asked_at=Max("am_asked_at"),
        firing=Count("id", filter=firing & Q(am_state=S.FIRING)),
        silenced=Count("id", filter=firing & Q(am_state=S.SILENCED)),
        inhibited=Count("id", filter=firing & Q(am_state=S.INHIBITED)),
        unlisted=Count("id", filter=firing & Q(am_state__in=(S.GONE, S.RESOLVED))),
        unknown=Count("id", filter=firing & Q(am_state__isnull=True)),
    )
    asked_at = totals["asked_at"]
    error = last_error(incident_id=incident_id, asked_at=asked_at) if asked_at else ""
    return AlertmanagerSays(error=error, **totals)


def incident_page_says(incident: Incident) -> AlertmanagerSays | None:
    """The line above the incident page's alerts, from incidents.selectors.incident_get's
    annotations: no query until Alertmanager has been asked, then one (the error)."""
    asked_at: datetime | None = getattr(incident, "am_asked_at", None)
    if asked_at is None:
        return None
    return AlertmanagerSays(
        checked_at=getattr(incident, "am_checked_at", None),
        asked_at=asked_at,
        error=last_error(incident_id=incident.pk, asked_at=asked_at),
        firing=0,
        silenced=0,
        inhibited=0,
        unlisted=0,
        unknown=0,
    )


def last_error(*, incident_id: int, asked_at: datetime) -> str:
    """Why asking failed when the incident's alerts were last asked about ("" if it did
    not); one query."""
    found = (
        Alert.objects.filter(incident_id=incident_id, am_asked_at=asked_at)
        .exclude(am_error__isnull=True)
        .exclude(am_error="")
        .values_list("am_error", flat=True)
        .first()
    )
    return found or ""
