"""Handing posts to the worker: by task name (this module imports no task, so the
services queue work without an import cycle with chatops/tasks.py, which imports them),
once the transaction that recorded them commits.

A broker that does not answer is logged and never raised to the caller (often the
webhook that has just opened an incident, or a person's button): the posts stay PENDING
and posts_requeue (beat, every CHAT_REQUEUE_SECONDS) queues them again.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from console.task_queue import tasks_send_each

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
    return tasks_send_each(task, ids, again="beat queues them again within CHAT_REQUEUE_SECONDS")
