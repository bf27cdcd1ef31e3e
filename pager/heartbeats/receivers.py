"""What the heartbeats hear from incidents: a Watchdog delivered by an Alertmanager
replica (incidents.heartbeat_alerts). PagerConfig.ready() calls `connect()`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from incidents.heartbeat_alerts import heartbeat_alerts_received
from pager.heartbeats.services import console_beat_watch, watchdog_seen


def watchdog_heard(sender: Any, *, source: str, alertname: str, at: datetime, **_: Any) -> None:
    watchdog_seen(source=source, at=at)
    # Alertmanager's deliveries are the one clock beat plays no part in: judge beat here.
    console_beat_watch(at=at)


def connect() -> None:
    heartbeat_alerts_received.connect(
        watchdog_heard, weak=False, dispatch_uid="pager.heartbeats.watchdog_heard"
    )
