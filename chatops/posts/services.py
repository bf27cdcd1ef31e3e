"""Every message the console sends to a chat, as a delivery with retries (ChatPost): a
chat outage leaves rows here and never blocks the console.

Recording is cheap and idempotent (a key per post, unique per workspace) and queues the
sending once the recording commits; sending happens on the worker, with no transaction
open during the call (claim, commit, call, record: notifications/services/deliveries.py
is the model). A thread's posts go out in order through thread_flush
(chatops/posts/flush.py); an answer to a person or a dialog goes out alone through
post_send. Beat's posts_requeue picks up what a broker outage, a retry's wait or a dead
worker left behind.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from chatops.models import ChatPost, ChatThread, PostKind, PostStatus
from chatops.posts.flush import thread_flush
from chatops.posts.outcome import lease, post_claim, post_done, post_failed, single_call
from chatops.posts.queue import (
    POST_SEND,
    THREAD_FLUSH,
    post_send_enqueue,
    send_now,
    thread_flush_enqueue,
)
from chatops.surfaces import transport_for

log = logging.getLogger(__name__)
P = PostStatus
KEY_MAX = 200  # ChatPost.key
REQUEUE_BATCH = 500


# --- recording ---------------------------------------------------------------------------
def post_create(
    *,
    workspace_id: int,
    kind: str,
    key: str,
    payload: dict[str, Any],
    thread_id: int | None = None,
    reply_url: str = "",
) -> ChatPost | None:
    """Record one post without queueing it (a caller recording several for one thread
    queues the thread once). None when `key` was recorded before: the same post."""
    with transaction.atomic():
        post, created = ChatPost.objects.get_or_create(
            workspace_id=workspace_id,
            key=key[:KEY_MAX],
            defaults={"kind": kind, "payload": payload, "thread_id": thread_id,
                      "reply_url": reply_url},
        )  # fmt: skip
    return post if created else None


def post_record(
    *,
    workspace_id: int,
    kind: str,
    key: str,
    payload: dict[str, Any],
    thread_id: int | None = None,
    reply_url: str = "",
) -> ChatPost | None:
    """Record one post, idempotent on (workspace, key), and queue its sending when the
    current transaction commits: a thread's post through thread_flush (in order), any
    other through post_send. None when the key was recorded before (nothing new)."""
    post = post_create(
        workspace_id=workspace_id, kind=kind, key=key, payload=payload, thread_id=thread_id,
        reply_url=reply_url,
    )  # fmt: skip
    if post is None:
        return None
    if thread_id is not None:
        thread_flush_enqueue([thread_id])
    else:
        post_send_enqueue([post.pk])
    return post


# --- sending (on the worker) -------------------------------------------------------------
def post_send(*, post_id: int) -> None:
    """Send one post now: an answer to a person (through the request's reply address when
    it has one, else as a message only they see) or a dialog (opened or updated; never
    retried: the trigger that opens one expires within seconds). A thread's post is sent
    with its thread, in order."""
    post = ChatPost.objects.select_related("workspace").filter(pk=post_id).first()
    if post is None or post.status in (P.SENT, P.FAILED):
        return
    if post.thread_id is not None:
        thread_flush(thread_id=post.thread_id)
        return
    claimed_at = post_claim(post)
    if claimed_at is None:
        return
    if not post.workspace.enabled:
        post_failed(post, claimed_at, _Disabled(), retry_allowed=False)
        return
    try:
        external_id = single_call(transport_for(post.workspace), post)
    except Exception as exc:  # TransportError, or a fault: recorded, never raised
        post_failed(post, claimed_at, exc, retry_allowed=post.kind != PostKind.VIEW)
        return
    post_done(post, claimed_at, external_id=external_id)


class _Disabled(Exception):
    def __str__(self) -> str:
        return "The workspace was disabled before this was sent."


# --- beat --------------------------------------------------------------------------------
def posts_requeue() -> int:
    """Beat: queue thread_flush for every thread with a post due (PENDING for longer than
    CHAT_REQUEUE_SECONDS: its task was lost or the broker did not answer; RETRYING whose
    next attempt has come; claimed by a worker whose lease ran out) or whose lease ran
    out, and post_send for such answers to people. Dialogs left waiting are given up.
    Returns how many tasks were queued."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.CHAT_REQUEUE_SECONDS)
    due = (
        Q(status=P.PENDING, created_at__lt=cutoff)
        | Q(status=P.RETRYING, next_attempt_at__lte=now)
        | Q(status=P.SENDING, claimed_at__lt=now - lease())
    )
    thread_ids = set(
        ChatPost.objects.filter(due, thread__isnull=False)
        .order_by("thread_id")
        .values_list("thread_id", flat=True)
        .distinct()[:REQUEUE_BATCH]
    )
    thread_ids |= set(
        ChatThread.objects.filter(busy_until__lt=now).values_list("pk", flat=True)[:REQUEUE_BATCH]
    )
    # A dialog's trigger lasts seconds: one still waiting can never be opened.
    ChatPost.objects.filter(
        kind=PostKind.VIEW, status__in=(P.PENDING, P.RETRYING), created_at__lt=cutoff
    ).update(
        status=P.FAILED,
        last_error="Not sent in time: the chat's trigger for this dialog has expired.",
        next_attempt_at=None,
    )
    post_ids = list(
        ChatPost.objects.filter(due, thread__isnull=True, kind=PostKind.REPLY)
        .order_by("pk")
        .values_list("pk", flat=True)[:REQUEUE_BATCH]
    )
    queued = send_now(THREAD_FLUSH, sorted(thread_ids)) if thread_ids else 0
    if post_ids:
        queued += send_now(POST_SEND, post_ids)
    return queued
