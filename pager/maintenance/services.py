"""Maintenance windows: planning and cancelling them, and the summary each occurrence
gets when it ends (beat, every minute).

Inside a window incidents still open, but nobody is paged (the escalation engine asks
pager.maintenance.selectors.window_for_incident). When an occurrence ends, what happened
inside it is written once (MaintenanceSummary, unique per window and occurrence), each
incident in it gets a MAINTENANCE line on its timeline, and the team's channel hears of
it, best effort, after the transaction (pager.maintenance.channel).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from console.audit.models import AuditKind, AuditMethod
from console.audit.services import audit_record
from console.errors import DomainError, NotFound
from console.permissions import require
from incidents.models import Incident, IncidentStatus
from incidents.services.timeline import incident_events_record
from pager import audit_texts as A
from pager import permissions as perms
from pager.audit_texts import audit_reason
from pager.maintenance.channel import summary_post
from pager.maintenance.recurrence import RecurrenceError, overlaps_itself, series
from pager.maintenance.selectors import incidents_opened_inside, occurrences
from pager.models import MaintenanceSummary, MaintenanceWindow, Team
from pager.models.schedules import zone_validate
from pager.models.teams import OWNERSHIP_LABELS
from pager.texts import pager_msg
from pager.timeline_kinds import MAINTENANCE

log = logging.getLogger(__name__)
MAX_DURATION = timedelta(days=31)
# Occurrences that ended this long ago without a summary (beat was down) get none.
LOOKBACK = timedelta(days=2)
_WHAT = gettext_lazy("plan maintenance windows")


def _invalid(message: str, **params: object) -> DomainError:
    return DomainError(message, code="invalid", params=params)


def _clean_matchers(matchers: object) -> dict[str, str]:
    if matchers in (None, ""):
        return {}
    if not isinstance(matchers, dict):
        raise _invalid(gettext_noop("The labels must be label: pattern pairs."))
    clean = {}
    for name, pattern in matchers.items():
        if name not in OWNERSHIP_LABELS:
            raise _invalid(
                gettext_noop("%(name)s is not a label a window can match (one of %(labels)s)."),
                name=repr(str(name)[:40]),
                labels=", ".join(OWNERSHIP_LABELS),
            )
        if not isinstance(pattern, str) or not pattern.strip() or len(pattern) > 253:
            raise _invalid(
                gettext_noop("The pattern for %(name)s must be 1 to 253 characters."), name=name
            )
        clean[name] = pattern.strip()
    return clean


def _check_times(starts_at: datetime, ends_at: datetime, recurrence: str, now: datetime) -> None:
    if timezone.is_naive(starts_at) or timezone.is_naive(ends_at):
        raise _invalid(gettext_noop("Give the start and end with their time zone."))
    if ends_at <= starts_at:
        raise _invalid(gettext_noop("The window must end after it starts."))
    if ends_at - starts_at > MAX_DURATION:
        raise _invalid(
            gettext_noop("A window lasts at most %(days)s days."), days=MAX_DURATION.days
        )
    if not recurrence and ends_at <= now:
        raise _invalid(gettext_noop("The window would already have ended."))


def _zone(time_zone: str) -> str:
    time_zone = (time_zone or "UTC").strip()
    try:
        zone_validate(time_zone)
    except ValidationError:
        raise _invalid(gettext_noop("Unknown time zone: %(name)s"), name=time_zone[:64]) from None
    return time_zone


@transaction.atomic
def window_create(
    *,
    name: str,
    team_id: int | None,
    matchers: dict[str, str] | None,
    starts_at: datetime,
    ends_at: datetime,
    recurrence: str,
    time_zone: str,
    reason: str,
    actor: User | AnonymousUser | None,
) -> MaintenanceWindow:
    """Plan a window: a team (everything it owns), label matchers, or both."""
    require(actor, perms.MANAGE, _WHAT)
    name = " ".join((name or "").split())
    if not name or len(name) > 200:
        raise _invalid(gettext_noop("A maintenance window needs a name of 1 to 200 characters."))
    team = None
    if team_id is not None:
        team = Team.objects.filter(pk=team_id).first()
        if team is None:
            raise NotFound(gettext_noop("Team #%(id)s does not exist."), params={"id": team_id})
    clean = _clean_matchers(matchers)
    if team is None and not clean:
        raise _invalid(
            gettext_noop("Choose a team or at least one label: a window covers nothing else.")
        )
    recurrence = " ".join((recurrence or "").split())
    zone = _zone(time_zone)
    _check_times(starts_at, ends_at, recurrence, timezone.now())
    try:
        planned = series(
            starts_at=starts_at, ends_at=ends_at, recurrence=recurrence, time_zone=zone
        )
    except RecurrenceError as exc:
        raise _invalid(
            gettext_noop("The repeat rule cannot be used: %(problem)s."), problem=str(exc)
        ) from None
    if overlaps_itself(planned):
        raise _invalid(
            gettext_noop("Each occurrence would begin before the one before it ends: "
                         "shorten the window or repeat it less often.")
        )  # fmt: skip
    reason = (reason or "").strip()
    if len(reason) > 500:
        raise _invalid(gettext_noop("The reason is longer than 500 characters."))
    window = MaintenanceWindow.objects.create(
        name=name,
        team=team,
        matchers=clean,
        starts_at=starts_at,
        ends_at=ends_at,
        recurrence=recurrence,
        time_zone=zone,
        reason=reason,
        created_by=actor if isinstance(actor, User) else None,
    )
    _audit(actor, audit_reason(A.WINDOW_CREATED, name=window.name), window)
    return window


def _audit(actor: User | AnonymousUser | None, reason: str, window: MaintenanceWindow) -> None:
    # Windows are configuration, not incidents: the audit log records who changed them.
    audit_record(
        kind=AuditKind.PAGER_CONFIG,
        method=AuditMethod.PAGER,
        user=actor if isinstance(actor, User) else None,
        reason=reason,
        new={"window": window.pk, "starts_at": window.starts_at.isoformat()},
    )


@transaction.atomic
def window_cancel(*, window_id: int, actor: User | AnonymousUser | None) -> MaintenanceWindow:
    """End a window now: no occurrence from now on; one under way ends now (and gets its
    summary)."""
    require(actor, perms.MANAGE, _WHAT)
    window = MaintenanceWindow.objects.select_for_update().filter(pk=window_id).first()
    if window is None:
        raise NotFound(
            gettext_noop("Maintenance window #%(id)s does not exist."), params={"id": window_id}
        )
    if window.cancelled_at is not None:
        raise DomainError(
            gettext_noop("The maintenance window %(name)s is already cancelled."),
            params={"name": window.name},
        )
    window.cancelled_at = timezone.now()
    window.save(update_fields=["cancelled_at"])
    _audit(actor, audit_reason(A.WINDOW_CANCELLED, name=window.name), window)
    return window


# --- summaries ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Ended:
    window: MaintenanceWindow
    start: datetime
    end: datetime


def _ended(now: datetime) -> list[Ended]:
    """Occurrences that ended within LOOKBACK (and after their window was made) and have
    no summary yet."""
    since = now - LOOKBACK
    windows = MaintenanceWindow.objects.filter(
        Q(starts_at__lte=now)
        & (~Q(recurrence="") | Q(ends_at__gt=since))
        & (Q(cancelled_at__isnull=True) | Q(cancelled_at__gt=since))
    ).select_related("team__channel")
    found = [
        Ended(window, s, e)
        for window in windows
        for s, e in occurrences(window, since - (window.ends_at - window.starts_at), now)
        if since < e <= now and e > window.created_at
    ]
    if not found:
        return []
    done = set(
        MaintenanceSummary.objects.filter(
            window_id__in={f.window.pk for f in found},
            occurrence_start__in={f.start for f in found},
        ).values_list("window_id", "occurrence_start")
    )
    return [f for f in found if (f.window.pk, f.start) not in done]


def _shown(window: MaintenanceWindow, start: datetime, end: datetime) -> str:
    zone = ZoneInfo(window.time_zone)
    a, b = start.astimezone(zone), end.astimezone(zone)
    until = f"{b:%H:%M}" if a.date() == b.date() else f"{b:%Y-%m-%d %H:%M}"
    return f"{a:%Y-%m-%d %H:%M} - {until} {window.time_zone}"


def summary_text(
    window: MaintenanceWindow, start: datetime, end: datetime, found: list[Incident]
) -> str:
    """The stored summary (English, like every timeline sentence)."""
    head = f'Maintenance window "{window.name}" ({_shown(window, start, end)}) ended.'
    if not found:
        return f"{head} No incident opened inside it."
    still = sum(inc.status != IncidentStatus.RESOLVED for inc in found)
    plural = "s" if len(found) != 1 else ""
    lines = [f"{head} {len(found)} incident{plural} opened inside it, {still} still open; "
             "nobody was paged:"]  # fmt: skip
    for inc in found:
        state = "still open" if inc.status != IncidentStatus.RESOLVED else "resolved"
        lines.append(f"- #{inc.pk} {inc.title} ({state}: {inc.status})")
    return "\n".join(lines)


def _summary_write(occ: Ended, now: datetime) -> MaintenanceSummary | None:
    """Write one occurrence's summary and its timeline lines; None when another run
    wrote it first."""
    window = occ.window
    found = incidents_opened_inside(window, occ.start, occ.end)
    with transaction.atomic():
        try:
            with transaction.atomic():
                summary = MaintenanceSummary.objects.create(
                    window=window,
                    occurrence_start=occ.start,
                    occurrence_end=occ.end,
                    incident_ids=[inc.pk for inc in found],
                    text=summary_text(window, occ.start, occ.end, found),
                    written_at=now,
                )
        except IntegrityError:  # a concurrent run wrote it
            return None
        message = pager_msg("maintenance_ended", window=window.name)
        payload = {
            "what": "maintenance_ended",
            "window": window.pk,
            "summary": summary.pk,
            "occurrence_start": occ.start.isoformat(),
            "occurrence_end": occ.end.isoformat(),
        }
        incident_events_record(
            events=[(inc.pk, MAINTENANCE, message, payload) for inc in found], source="pager"
        )
    return summary


def summaries_write(*, now: datetime | None = None) -> int:
    """Beat: a summary for every occurrence that has ended since the last run; then each
    is posted to its team's channel (outside any transaction, best effort). Returns how
    many were written."""
    now = now or timezone.now()
    written = []
    for occ in _ended(now):
        try:
            summary = _summary_write(occ, now)
        except Exception:  # one window's trouble must not hold back the others
            log.exception("maintenance window %s: the summary failed", occ.window.pk)
            continue
        if summary is not None:
            written.append((occ.window, summary))
    for window, summary in written:
        summary_post(window=window, summary=summary)
    return len(written)
