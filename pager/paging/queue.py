"""Handing pages to the worker: by task name (this module imports no task, so the
escalation engine and the services can queue pages without an import cycle), once the
transaction that made them commits.

A broker that does not answer is logged and never raised to the caller (the escalation
tick, often): the pages stay PENDING and pages_requeue (beat, every minute) queues them
again once the broker is back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from celery import current_app
from django.db import transaction

log = logging.getLogger(__name__)
TASK = "pager.tasks.paging.page_send"


def pages_enqueue(page_ids: Iterable[int]) -> None:
    """Queue page_send for each page when the current transaction commits (at once
    outside a transaction)."""
    ids = list(page_ids)
    if ids:
        transaction.on_commit(lambda: _send(ids))


def _send(ids: list[int]) -> None:
    for pk in ids:
        try:
            # retry=False: fail at once instead of holding the caller in kombu's retries.
            current_app.signature(TASK, args=(pk,)).apply_async(retry=False)
        except Exception as exc:  # kombu and redis raise several types for a broker that is down
            log.warning(
                "pager: could not queue pages %s (the broker did not answer: %s); beat "
                "queues them again within a minute",
                ids[ids.index(pk) :],
                exc,
            )
            return
