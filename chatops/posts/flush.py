"""Sending a thread's posts, in order, by one worker at a time.

The worker takes the thread (a conditional UPDATE of `busy_until`, a lease of
CHAT_SEND_LEASE_SECONDS renewed after each post; a worker that died loses it when it runs
out), sends its open posts in id order and releases it. Order is what makes a thread read
right (the channel before the state message, the state message before the lines under
it), so the first post that must wait stops the flush: it is RETRYING until its next
attempt and posts_requeue (beat) flushes the thread again then. A post given up (FAILED)
does not hold the others back, except the channel and the state message: without them
there is no thread, and the posts after them fail saying so.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from chatops.models import ChatPost, ChatThread, PostKind, PostStatus
from chatops.posts.outcome import (
    OPEN,
    lease,
    post_claim,
    post_done,
    post_failed,
    posts_fail,
    thread_call,
)
from chatops.surfaces import transport_for
from chatops.transport import Transport

log = logging.getLogger(__name__)
P = PostStatus
ROUNDS = 3  # posts recorded while the thread was held are sent by the same task
_STARTS = (PostKind.CHANNEL, PostKind.STATE)


def thread_flush(*, thread_id: int) -> None:
    """Send the thread's open posts in order (on the worker; a copy of the task that finds
    the thread held leaves it to the holder)."""
    for _ in range(ROUNDS):
        held = _take(thread_id)
        if held is None:
            return
        try:
            finished = _flush(thread_id, held)
        finally:
            ChatThread.objects.filter(pk=thread_id, busy_until=held[0]).update(busy_until=None)
        # Recorded while we held it: the task queued for them found the thread held.
        if not finished or not _waiting(thread_id):
            return


def _take(thread_id: int) -> list[datetime] | None:
    """The lease as a one-item list (renewed in place), or None when another worker has it."""
    now = timezone.now()
    until = now + lease()
    free = Q(busy_until__isnull=True) | Q(busy_until__lt=now)
    if not ChatThread.objects.filter(free, pk=thread_id).update(busy_until=until):
        return None
    return [until]


def _renew(thread_id: int, held: list[datetime]) -> bool:
    until = timezone.now() + lease()
    if not ChatThread.objects.filter(pk=thread_id, busy_until=held[0]).update(busy_until=until):
        return False  # taken over: our lease ran out while a call hung
    held[0] = until
    return True


def _waiting(thread_id: int) -> bool:
    return ChatPost.objects.filter(thread_id=thread_id, status=P.PENDING).exists()


def _flush(thread_id: int, held: list[datetime]) -> bool:
    """Send what can be sent; False when a post must wait (or the lease was lost)."""
    thread = ChatThread.objects.select_related("workspace").filter(pk=thread_id).first()
    if thread is None:
        return False
    # Within our lease a SENDING post was claimed by a worker that died holding the thread.
    posts = list(
        ChatPost.objects.filter(thread_id=thread_id, status__in=(*OPEN, P.SENDING)).order_by("pk")
    )
    if not posts:
        return True
    if not thread.workspace.enabled:
        posts_fail([p.pk for p in posts], "The workspace was disabled before this was sent.")
        return True
    transport = transport_for(thread.workspace)
    last_edit = max((p.pk for p in posts if p.kind == PostKind.STATE_EDIT), default=None)
    for index, post in enumerate(posts):
        if (
            post.status == P.RETRYING
            and post.next_attempt_at
            and post.next_attempt_at > timezone.now()
        ):
            return False
        if post.kind == PostKind.STATE_EDIT and post.pk != last_edit:
            # Superseded: the newer edit says everything this one would.
            ChatPost.objects.filter(pk=post.pk, status__in=(*OPEN, P.SENDING)).update(
                status=P.SENT, sent_at=timezone.now(), last_error="", next_attempt_at=None
            )
            continue
        missing = _missing(thread, post)
        if missing:
            posts_fail([post.pk], missing)
            continue
        if post.status == P.SENDING:
            post.status = P.RETRYING  # our lease: the claim below may take it over
            ChatPost.objects.filter(pk=post.pk, status=P.SENDING).update(status=P.RETRYING)
        if not _send(transport, thread, post):
            if post.status == P.RETRYING:
                return False
            if post.kind in _STARTS:
                rest = [p.pk for p in posts[index + 1 :]]
                posts_fail(rest, f"The thread could not be started: {post.last_error}")
                return True
        if not _renew(thread_id, held):
            return False
    return True


def _missing(thread: ChatThread, post: ChatPost) -> str:
    """Why `post` cannot be sent yet ("" when it can): the thread has no channel or no
    state message because the post that makes it was given up."""
    needs_root = post.kind in (PostKind.STATE_EDIT, PostKind.TIMELINE)
    if post.kind == PostKind.CHANNEL or (thread.channel and (thread.root or not needs_root)):
        return ""
    started = (
        ChatPost.objects.filter(thread_id=thread.pk, kind__in=_STARTS, status=P.FAILED)
        .order_by("-pk")
        .values_list("last_error", flat=True)
        .first()
    )
    why = started or "its channel or state message was never sent"
    return f"The thread could not be started: {why}"


def _send(transport: Transport, thread: ChatThread, post: ChatPost) -> bool:
    """One attempt; True when sent. The thread learns its channel or root with the post."""
    claimed_at = post_claim(post)
    if claimed_at is None:
        return True  # another copy took it: nothing of ours to wait for
    try:
        external_id = thread_call(transport, thread, post)
    except Exception as exc:  # TransportError, or a fault: recorded, never raised
        post_failed(post, claimed_at, exc)
        return False
    with transaction.atomic():
        if post_done(post, claimed_at, external_id=external_id):
            if post.kind == PostKind.CHANNEL:
                thread.channel = external_id
                ChatThread.objects.filter(pk=thread.pk).update(channel=external_id)
            elif post.kind == PostKind.STATE:
                thread.root = external_id
                ChatThread.objects.filter(pk=thread.pk).update(root=external_id)
    return True
