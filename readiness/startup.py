"""Discover at start: the checklist is refreshed on a 15-minute beat, and nothing showed
until its first run. When beat starts (standalone `celery beat` or a worker's embedded
`--beat`, as in `make run`), it queues one refresh right away."""

from __future__ import annotations

import logging
from typing import Any

from celery import current_app, signals

log = logging.getLogger(__name__)
REFRESH_TASK = "readiness.tasks.checklists_refresh"


def discover_on_beat_start(sender: Any = None, **_kwargs: Any) -> None:
    """beat_init receiver: queue one discovery now instead of in 15 minutes."""
    try:
        current_app.send_task(REFRESH_TASK)
    except Exception:  # a broker that is not up yet: the schedule still runs
        log.warning("readiness: could not queue the discovery at beat start", exc_info=True)


def connect() -> None:
    signals.beat_init.connect(
        discover_on_beat_start, weak=False, dispatch_uid="readiness.discover_on_beat_start"
    )
