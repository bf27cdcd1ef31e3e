"""Queueing a task per primary key by its name, for work whose rows say what is left to
do: a broker that does not answer is logged and never raised to the caller (often a
webhook, a person's button or the escalation tick), and the caller's beat task, which
finds the rows still waiting, queues them again. By name, so a service queues its app's
task without importing the tasks module that imports it."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from celery import current_app

log = logging.getLogger(__name__)


def tasks_send_each(name: str, ids: Iterable[int], *, again: str) -> int:
    """Queue `name` once per id, in order; how many were queued before the broker failed
    (it is not asked again for the rest). `again` says when beat picks up the rest."""
    ids = list(ids)
    for done, pk in enumerate(ids):
        try:
            # retry=False: fail at once instead of holding the caller in kombu's retries.
            current_app.signature(name, args=(pk,)).apply_async(retry=False)
        except Exception as exc:  # kombu and redis raise several types for a broker that is down
            log.warning(
                "could not queue %s for %s (the broker did not answer: %s); %s",
                name, ids[done:], exc, again,
            )  # fmt: skip
            return done
    return len(ids)
