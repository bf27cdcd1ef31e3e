"""Alerts that are heartbeats, not incidents: those named in HEARTBEAT_ALERTNAMES, such as
Alertmanager's always-firing `Watchdog`. Their arriving at all is the news (this
Alertmanager replica, and the Prometheus feeding it, still work); an incident opened
for them would be noise, and their silence is what matters.

Ingest (incidents/ingest/apply.py) takes them out of a notification before grouping:
they open no incident and are not stored as alerts; the delivery's receipt still records
them. Once the delivery commits, each firing one is announced through
`heartbeat_alerts_received` with the notification's externalURL (which tells the
Alertmanager replicas apart), its alertname and when it came. A resolved one is not a
beat: Alertmanager resolves the Watchdog when Prometheus stopped sending it, the very
failure it exists to show, so it is dropped silently.

Higher apps (the pager keeps one heartbeat per replica) connect from their
AppConfig.ready(), so incidents imports none of them; a receiver that raises is logged
and the delivery stands.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.dispatch import Signal

from incidents.ingest.parse import ParsedAlert, ParsedPayload

log = logging.getLogger(__name__)

# Sent with source=<externalURL>, alertname=<str>, at=<aware datetime>, after commit.
heartbeat_alerts_received = Signal()


def heartbeat_alertnames() -> frozenset[str]:
    return frozenset(settings.HEARTBEAT_ALERTNAMES or ())


def heartbeat_alerts_split(payload: ParsedPayload) -> tuple[ParsedPayload, list[ParsedAlert]]:
    """The notification without its heartbeat alerts, and those alerts. The payload is
    returned unchanged (the same object) when it carries none: the usual case costs a
    set lookup per alert."""
    names = heartbeat_alertnames()
    if not names or not any(a.alertname in names for a in payload.alerts):
        return payload, []
    beats = [a for a in payload.alerts if a.alertname in names]
    rest = [a for a in payload.alerts if a.alertname not in names]
    return replace(payload, alerts=rest), beats


def heartbeat_alerts_announce(*, source: str, alerts: list[ParsedAlert], at: datetime) -> None:
    """Send `heartbeat_alerts_received` once per firing alertname when the current
    transaction commits (at once outside one)."""
    firing = sorted({a.alertname for a in alerts if a.status == "firing"})
    if not firing:
        return
    transaction.on_commit(lambda: _send(source, firing, at), robust=True)


def _send(source: str, alertnames: list[str], at: datetime) -> None:
    for alertname in alertnames:
        results = heartbeat_alerts_received.send_robust(
            sender=ParsedAlert, source=source, alertname=alertname, at=at
        )
        for receiver_, result in results:
            if isinstance(result, Exception):
                log.error(
                    "heartbeat_alerts_received: %r failed: %r", receiver_, result, exc_info=result
                )
