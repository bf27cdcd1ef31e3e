"""Handing posts to the worker: by task name (this module imports no task, so the
services queue work without an import cycle with chatops/tasks.py, which imports them),
once the transaction that recorded them commits.

A broker that does not answer is logged and never raised to the caller (often the
webhook that has just opened an incident, or a person's button): the posts stay PENDING
and posts_requeue (beat, every CHAT_REQUEUE_SECONDS) queues them again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from celery import current_app
from django.db import transaction

log = logging.getLogger(__name__)
THREAD_FLUSH = "chatops.tasks.thread_flush"
POST_SEND = "chatops.tasks.post_send"


def thread_flush_enqueue(thread_ids: Iterable[int]) -> None:
    """Queue thread_flush for each thread when the current transaction commits (at once
    outside one)."""
    ids = sorted(set(thread_ids))
    if ids:
        transaction.on_commit(lambda: _send(THREAD_FLUSH, ids))


def post_send_enqueue(post_ids: Iterable[int]) -> None:
    ids = sorted(set(post_ids))
    if ids:
        transaction.on_commit(lambda: _send(POST_SEND, ids))


def send_now(task: str, ids: list[int]) -> int:
    """Queue `task` for each id now (beat's requeue, outside any transaction); how many
    were queued before the broker failed, if it did."""
    return _send(task, ids)


def _send(task: str, ids: list[int]) -> int:
    for done, pk in enumerate(ids):
        try:
            # retry=False: fail at once instead of holding the caller in kombu's retries.
            current_app.signature(task, args=(pk,)).apply_async(retry=False)
        except Exception as exc:  # kombu and redis raise several types for a broker that is down
            log.warning(
                "chatops: could not queue %s for %s (the broker did not answer: %s); beat "
                "queues them again within %s",
                task,
                ids[done:],
                exc,
                "CHAT_REQUEUE_SECONDS",
            )
            return done
    return len(ids)
