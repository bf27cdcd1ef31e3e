"""One attempt at one post, as rows: claim it (committed before the call), then record
what the chat answered, only while the claim is still ours (a post taken over after
CHAT_SEND_LEASE_SECONDS keeps the newer attempt's state). Modelled on
notifications/services/deliveries.py: no outgoing call inside a transaction."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from chatops.messages import Dialog, Message
from chatops.models import ChatPost, ChatThread, PostKind, PostStatus
from chatops.transport import Transport, TransportError

log = logging.getLogger(__name__)
P = PostStatus
OPEN = (P.PENDING, P.RETRYING)
ERROR_MAX = 2000


def lease() -> timedelta:
    return timedelta(seconds=settings.CHAT_SEND_LEASE_SECONDS)


def claimable(now: datetime) -> Q:
    """Waiting, or claimed by a worker that died mid-call (its claim ran out)."""
    return Q(status__in=OPEN) | Q(status=P.SENDING, claimed_at__lt=now - lease())


def post_claim(post: ChatPost) -> datetime | None:
    """Take `post` for one attempt: count it and stamp it in one conditional UPDATE
    (autocommit: a lost send still shows its attempt). None when another worker has it
    or it is finished."""
    now = timezone.now()
    claimed = ChatPost.objects.filter(claimable(now), pk=post.pk).update(
        status=P.SENDING, attempts=F("attempts") + 1, claimed_at=now
    )
    if not claimed:
        return None
    post.status, post.attempts, post.claimed_at = P.SENDING, post.attempts + 1, now
    return now


def post_done(post: ChatPost, claimed_at: datetime, *, external_id: str = "") -> bool:
    now = timezone.now()
    return bool(
        ChatPost.objects.filter(pk=post.pk, status=P.SENDING, claimed_at=claimed_at).update(
            status=P.SENT,
            sent_at=now,
            external_id=external_id[:64],
            last_error="",
            next_attempt_at=None,
        )
    )


def post_failed(
    post: ChatPost, claimed_at: datetime, exc: Exception, *, retry_allowed: bool = True
) -> str:
    """Record a failed attempt: RETRYING with its next attempt (what a 429 asked for, else
    CHAT_RETRY_BACKOFF_SECONDS x attempts) while a later attempt may help and attempts
    remain, else FAILED. Returns the status written."""
    retry = exc.retry if isinstance(exc, TransportError) else True  # unknown: a fault, try again
    after = exc.retry_after if isinstance(exc, TransportError) else None
    error = str(exc) if isinstance(exc, TransportError) else f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, TransportError):
        log.error("chatops: post %s failed outside the transport", post.pk, exc_info=exc)
    now = timezone.now()
    if retry and retry_allowed and post.attempts < settings.CHAT_POST_MAX_ATTEMPTS:
        wait = after if after else settings.CHAT_RETRY_BACKOFF_SECONDS * max(post.attempts, 1)
        status, next_at = P.RETRYING, now + timedelta(seconds=float(wait))
    else:
        status, next_at = P.FAILED, None
        if retry and retry_allowed:
            error += f" Gave up after {post.attempts} attempts."
    ChatPost.objects.filter(pk=post.pk, status=P.SENDING, claimed_at=claimed_at).update(
        status=status, last_error=error[:ERROR_MAX], next_attempt_at=next_at
    )
    post.status, post.last_error = status, error
    return status


def posts_fail(post_ids: list[int], error: str) -> int:
    """Give up posts that cannot be sent (the thread could not be started, the workspace
    was disabled)."""
    if not post_ids:
        return 0
    return (
        ChatPost.objects.filter(pk__in=post_ids)
        .exclude(status=P.SENT)
        .update(status=P.FAILED, last_error=error[:ERROR_MAX], next_attempt_at=None)
    )


def message_of(post: ChatPost) -> Message:
    return Message.from_dict(dict(post.payload.get("message") or {}))


def thread_call(transport: Transport, thread: ChatThread, post: ChatPost) -> str:
    """Send one of a thread's posts; returns what identifies it in the chat."""
    if post.kind == PostKind.CHANNEL:
        members = [str(m) for m in post.payload.get("members") or []]
        return transport.create_channel(name=str(post.payload.get("name", "")), members=members)
    if post.kind == PostKind.STATE:
        return transport.post(channel=thread.channel, thread="", message=message_of(post))
    if post.kind == PostKind.STATE_EDIT:
        transport.edit(channel=thread.channel, message_id=thread.root, message=message_of(post))
        return thread.root
    if post.kind == PostKind.TIMELINE:
        return transport.post(channel=thread.channel, thread=thread.root, message=message_of(post))
    raise TransportError(f"A {post.kind} post is not sent in a thread.")


def single_call(transport: Transport, post: ChatPost) -> str:
    """Send a post outside any thread: an answer to a person, or a dialog."""
    payload = post.payload
    if post.kind == PostKind.REPLY:
        message = message_of(post)
        if post.reply_url:
            transport.respond(reply_url=post.reply_url, message=message)
        else:
            transport.ephemeral(
                channel=str(payload.get("channel", "")),
                user=str(payload.get("user", "")),
                thread=str(payload.get("thread", "")),
                message=message,
            )
        return ""
    if post.kind == PostKind.VIEW:
        dialog = Dialog.from_dict(dict(payload.get("dialog") or {}))
        dialog_id = str(payload.get("dialog_id", ""))
        if dialog_id:
            transport.update_dialog(dialog_id=dialog_id, dialog=dialog)
            return dialog_id
        return transport.open_dialog(
            trigger=str(payload.get("trigger", "")),
            dialog=dialog,
            user=str(payload.get("user", "")),
        )
    raise TransportError(f"A {post.kind} post is sent in its thread.")
