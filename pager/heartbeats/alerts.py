"""A missing heartbeat pages the way an alert does: the check feeds a synthetic
Alertmanager notification (alertname HeartbeatMissing) into the normal ingest pipeline,
so an incident opens, is routed to the team named by its `team` label, escalates, is
suppressed by a maintenance window, and is mitigated when the resolved alert follows,
exactly like any other. The body is the webhook v4 shape Alertmanager sends and goes
through the same parser; its receipt (source "console") keeps it.

One alert episode per time missing: startsAt is the moment the check saw it missing.
The fingerprint is derived from the heartbeat's slug alone, so the resolved alert
matches the firing one even if the team (a label) changed in between.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from incidents.ingest.apply import IngestResult, alerts_ingest
from incidents.ingest.parse import ReceiptMeta, labels_fingerprint, parse_body
from pager.models import Heartbeat, HeartbeatKind

ALERTNAME = "HeartbeatMissing"
NAMESPACE = "console"
RECEIVER = "console-heartbeats"
SOURCE = "console"  # the receipt's source
GO_ZERO = "0001-01-01T00:00:00Z"  # Alertmanager's endsAt for a firing alert


def _time(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _shown(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def alert_fingerprint(heartbeat: Heartbeat) -> str:
    return labels_fingerprint({"alertname": ALERTNAME, "heartbeat": heartbeat.slug})


def alert_labels(heartbeat: Heartbeat) -> dict[str, str]:
    team = heartbeat.team.slug if heartbeat.team is not None else ""
    return {
        "alertname": ALERTNAME,
        "heartbeat": heartbeat.slug,
        "namespace": NAMESPACE,
        "team": team,
        "severity": "critical",
    }


def _summary(heartbeat: Heartbeat) -> str:
    if heartbeat.last_seen_at is None:
        created = _shown(heartbeat.created_at)
        return f"{heartbeat.name} has not checked in since it was set up at {created}"
    return f"{heartbeat.name} has not checked in since {_shown(heartbeat.last_seen_at)}"


def _description(heartbeat: Heartbeat) -> str:
    every = f"every {heartbeat.interval_seconds} s (grace {heartbeat.grace_seconds} s)"
    if heartbeat.kind == HeartbeatKind.WATCHDOG:
        return (
            f"Alertmanager at {heartbeat.source or '(no externalURL)'} delivers its always-"
            f"firing Watchdog alert {every} and has stopped: that replica, the Prometheus "
            "feeding it, or its route to the console is down. Alerts may be going nowhere."
        )
    if heartbeat.kind == HeartbeatKind.CONSOLE and heartbeat.source.startswith("worker:"):
        queue = heartbeat.source.removeprefix("worker:")
        return (
            f"No Celery worker consuming the {queue} queue has sent a heartbeat {every}: "
            f"what is queued on {queue} is not running. Check the worker pods and "
            "/readyz/worker."
        )
    if heartbeat.kind == HeartbeatKind.CONSOLE:
        return (
            f"The console's heartbeat check has not run {every}: celery beat is down, or "
            "no worker takes the default and notifications queues. Periodic work "
            "(escalations, reconciling, requeues) has stopped."
        )
    return f"Expected a check-in {every} at POST /api/v1/pager/heartbeats/{heartbeat.slug}/beat."


def notification_body(
    heartbeat: Heartbeat, *, starts_at: datetime, resolved_at: datetime | None = None
) -> dict[str, object]:
    """The webhook v4 body: firing, or resolved at `resolved_at`."""
    labels = alert_labels(heartbeat)
    status = "firing" if resolved_at is None else "resolved"
    if resolved_at is None:
        annotations = {"summary": _summary(heartbeat), "description": _description(heartbeat)}
    else:
        annotations = {
            "summary": f"{heartbeat.name} checks in again",
            "description": _description(heartbeat),
        }
    group = {"alertname": ALERTNAME, "heartbeat": heartbeat.slug, "team": labels["team"]}
    pairs = ", ".join(f'{k}="{v}"' for k, v in sorted(group.items()) if k != "team")
    return {
        "version": "4",
        "receiver": RECEIVER,
        "status": status,
        # One group per heartbeat, whatever its team: the incident stays the same.
        "groupKey": f"{{}}:{{{pairs}}}",
        "groupLabels": group,
        "commonLabels": labels,
        "commonAnnotations": annotations,
        "externalURL": "",
        "truncatedAlerts": 0,
        "alerts": [
            {
                "status": status,
                "labels": labels,
                "annotations": annotations,
                "startsAt": _time(starts_at),
                "endsAt": _time(resolved_at) if resolved_at else GO_ZERO,
                "generatorURL": "",
                "fingerprint": alert_fingerprint(heartbeat),
            }
        ],
    }


def heartbeat_alert_send(
    heartbeat: Heartbeat, *, starts_at: datetime, resolved_at: datetime | None = None
) -> IngestResult:
    """Feed the firing (or resolved) HeartbeatMissing alert through ingest. Database
    work only: it may run inside the caller's transaction."""
    raw = json.dumps(
        notification_body(heartbeat, starts_at=starts_at, resolved_at=resolved_at),
        separators=(",", ":"),
    ).encode()
    meta = ReceiptMeta.for_bytes(raw, source=SOURCE, user_agent="console heartbeat check")
    return alerts_ingest(payload=parse_body(raw), meta=meta)
