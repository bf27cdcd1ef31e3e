"""Handing pages to the worker: by task name (this module imports no task, so the
escalation engine and the services can queue pages without an import cycle), once the
transaction that made them commits.

A broker that does not answer is logged and never raised to the caller (the escalation
tick, often): the pages stay PENDING and pages_requeue (beat, every minute) queues them
again once the broker is back.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from console.task_queue import tasks_send_each

TASK = "pager.tasks.paging.page_send"


def pages_enqueue(page_ids: Iterable[int]) -> None:
    """Queue page_send for each page when the current transaction commits (at once
    outside a transaction)."""
    ids = list(page_ids)
    if ids:
        transaction.on_commit(lambda: _send(ids))


def _send(ids: list[int]) -> None:
    tasks_send_each(TASK, ids, again="beat queues them again within a minute")
