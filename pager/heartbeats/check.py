"""The heartbeat check (beat, every 30 s, on two queues): a heartbeat past its last
check-in (or its creation) + interval + grace goes MISSING and its HeartbeatMissing
alert fires through ingest (pager.heartbeats.alerts); one that has checked in again
since goes back to OK and its alert resolves, which mitigates the incident.

Each heartbeat is decided in a transaction of its own that locks its row with SKIP
LOCKED: two checks running at once (one per queue) never both act on one heartbeat, and
the state and the alert commit together (ingest is database work only: no call out
happens inside). While a heartbeat stays missing its firing alert is sent again every
RESEND_AFTER, as Alertmanager repeats a firing alert: the reconcile with Alertmanager
ends a firing alert nobody has re-sent for ALERTMANAGER_RECONCILE_GRACE_SECONDS, and
Alertmanager has never heard of this one.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from incidents.models import Alert
from pager.heartbeats.alerts import alert_fingerprint, heartbeat_alert_send
from pager.heartbeats.console import console_health_record
from pager.heartbeats.selectors import overdue
from pager.models import Heartbeat, HeartbeatState

log = logging.getLogger(__name__)
RESEND_AFTER = timedelta(seconds=60)


def heartbeats_check(*, now: datetime | None = None) -> int:
    """Beat: feed the console's own heartbeats, then move every heartbeat whose state is
    due to change. Returns how many changed state."""
    now = now or timezone.now()
    console_health_record(now=now)
    changed = 0
    for heartbeat_id in _candidates(now):
        try:
            changed += heartbeat_evaluate(heartbeat_id=heartbeat_id, now=now)
        except Exception:  # one heartbeat's failure must not silence the others
            log.exception("heartbeat %s: the check failed", heartbeat_id)
    return changed


def _candidates(now: datetime) -> list[int]:
    """The heartbeats whose state may change, or whose alert may need re-sending: one
    query, the table is small. Each is decided again under its lock."""
    found = []
    for hb in Heartbeat.objects.only(
        "pk", "state", "enabled", "last_seen_at", "created_at", "interval_seconds",
        "grace_seconds", "missing_since",
    ):  # fmt: skip
        late = hb.enabled and overdue(hb, now)
        if (hb.state == HeartbeatState.MISSING) or late:
            found.append(hb.pk)
    return found


def _resend_due(heartbeat: Heartbeat, starts: datetime, now: datetime) -> bool:
    """Whether the firing alert of a heartbeat still missing should go again."""
    sent = (
        Alert.objects.filter(fingerprint=alert_fingerprint(heartbeat), starts_at=starts)
        .values_list("last_received_at", flat=True)
        .first()
    )
    return sent is None or sent <= now - RESEND_AFTER


def heartbeat_evaluate(*, heartbeat_id: int, now: datetime) -> int:
    """Decide one heartbeat under its row lock; 1 when its state changed. Skipped (0)
    when another check holds it."""
    with transaction.atomic():
        heartbeat = (
            Heartbeat.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("team")
            .filter(pk=heartbeat_id)
            .first()
        )
        if heartbeat is None:
            return 0
        late = heartbeat.enabled and overdue(heartbeat, now)
        if heartbeat.state != HeartbeatState.MISSING:
            if not late:
                return 0
            heartbeat.state = HeartbeatState.MISSING
            heartbeat.missing_since = now
            _fire(heartbeat)
            heartbeat.save(update_fields=["state", "missing_since", "incident"])
            log.warning("heartbeat %s is missing", heartbeat.slug)
            return 1
        starts = heartbeat.missing_since or now
        if late:
            if _resend_due(heartbeat, starts, now):
                heartbeat.missing_since = starts
                _fire(heartbeat)
                heartbeat.save(update_fields=["missing_since", "incident"])
            return 0
        # Checked in again (or disabled): the alert resolves, the incident is mitigated.
        heartbeat_alert_send(heartbeat, starts_at=starts, resolved_at=now)
        heartbeat.state = (
            HeartbeatState.OK if heartbeat.last_seen_at is not None else HeartbeatState.WAITING
        )
        heartbeat.missing_since = None
        heartbeat.save(update_fields=["state", "missing_since"])
        log.info("heartbeat %s checks in again", heartbeat.slug)
        return 1


def _fire(heartbeat: Heartbeat) -> None:
    """Send the firing alert and remember the incident that holds it."""
    assert heartbeat.missing_since is not None
    heartbeat_alert_send(heartbeat, starts_at=heartbeat.missing_since)
    held = (
        Alert.objects.filter(
            fingerprint=alert_fingerprint(heartbeat), starts_at=heartbeat.missing_since
        )
        .values_list("incident_id", flat=True)
        .first()
    )
    if held is not None:
        heartbeat.incident_id = held
