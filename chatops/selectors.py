"""Reads for the chat pages (/chat/, a thread) and the incident page's chat panel. Each
costs a fixed number of queries whatever the number of rows: the lists are querysets the
pages paginate, with what a row shows joined in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.db.models import BooleanField, Count, ExpressionWrapper, Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404

from chatops.messages import Dialog, Message
from chatops.models import (
    ChatIdentity,
    ChatInteraction,
    ChatPost,
    ChatThread,
    PostKind,
    PostStatus,
    Surface,
    TeamChannel,
    Workspace,
)

OPEN_STATUSES = (PostStatus.PENDING, PostStatus.SENDING, PostStatus.RETRYING, PostStatus.FAILED)
STATE_KINDS = (PostKind.STATE, PostKind.STATE_EDIT)
# What the thread page lists under the state message, in the order they were recorded.
THREAD_KINDS = (PostKind.CHANNEL, PostKind.TIMELINE, PostKind.REPLY, PostKind.VIEW)


# --- /chat/ ---------------------------------------------------------------------------------
def workspaces_list() -> list[Workspace]:
    """Every installation with its team channels (two queries)."""
    channels = TeamChannel.objects.select_related("team").order_by("team__name")
    return list(
        Workspace.objects.order_by("name").prefetch_related(
            Prefetch("team_channels", queryset=channels)
        )
    )


def identities_list() -> QuerySet[ChatIdentity]:
    """Chat users, the unmapped first (they can read but not act), then by name."""
    mapped = ExpressionWrapper(Q(user__isnull=False), output_field=BooleanField())
    return (
        ChatIdentity.objects.select_related("workspace", "user")
        .annotate(mapped=mapped)
        .order_by("mapped", "external_name", "external_user", "pk")
    )


def unmapped_count() -> int:
    return ChatIdentity.objects.filter(user__isnull=True).count()


def interactions_recent() -> QuerySet[ChatInteraction]:
    """Requests from chat, newest first."""
    return ChatInteraction.objects.select_related("workspace", "identity", "user", "incident")


def posts_open() -> QuerySet[ChatPost]:
    """Posts not (yet) delivered: waiting, sending, retrying, failed; newest first."""
    return ChatPost.objects.filter(status__in=OPEN_STATUSES).select_related(
        "workspace", "thread", "thread__incident"
    )


# --- a thread ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ShownPost:
    """A post as the thread page draws it."""

    post: ChatPost
    message: Message | None = None
    dialog: Dialog | None = None
    only_to: str = ""  # a reply or dialog only this chat user saw ("" for everyone)
    broken: bool = False  # the stored payload could not be read back

    @property
    def at(self) -> datetime:
        """When the chat shows it: sent, else recorded."""
        return self.post.sent_at or self.post.created_at

    @property
    def plain(self) -> bool:
        """Only text: drawn as a plain line, as a chat does (no card, no bar)."""
        m = self.message
        return m is not None and not (m.title or m.fields or m.buttons or m.lines)


def shown(post: ChatPost, names: dict[str, str] | None = None) -> ShownPost:
    payload: dict[str, Any] = post.payload if isinstance(post.payload, dict) else {}
    only_to = ""
    if post.kind in (PostKind.REPLY, PostKind.VIEW):
        user = str(payload.get("user", ""))
        only_to = (names or {}).get(user, "") or user
    try:
        if post.kind == PostKind.VIEW:
            return ShownPost(post, dialog=Dialog.from_dict(payload.get("dialog") or {}),
                             only_to=only_to)  # fmt: skip
        if post.kind == PostKind.CHANNEL:
            return ShownPost(post)
        return ShownPost(post, message=Message.from_dict(payload.get("message") or {}),
                         only_to=only_to)  # fmt: skip
    except (TypeError, ValueError, AttributeError):
        return ShownPost(post, only_to=only_to, broken=True)


@dataclass(frozen=True)
class ThreadState:
    """The state message as the chat shows it (the newest version sent, else the newest
    recorded) and a newer version not sent yet, if any."""

    current: ShownPost | None
    newer: ChatPost | None


def thread_get(pk: int) -> ChatThread:
    return get_object_or_404(
        ChatThread.objects.select_related("incident", "workspace", "incident__commander"), pk=pk
    )


def thread_state(thread: ChatThread) -> ThreadState:
    """Two queries: the newest sent version and the newest of all."""
    versions = ChatPost.objects.filter(thread=thread, kind__in=STATE_KINDS).order_by(
        "-created_at", "-pk"
    )
    newest = versions.first()
    sent = newest if newest is not None and newest.status == PostStatus.SENT else (
        versions.filter(status=PostStatus.SENT).first()
    )  # fmt: skip
    current = sent or newest
    newer = (
        newest if newest is not None and current is not None and newest.pk != current.pk else None
    )
    return ThreadState(current=shown(current) if current is not None else None, newer=newer)


def thread_posts(thread: ChatThread) -> QuerySet[ChatPost]:
    """What the thread holds under its state message, oldest first (paginated)."""
    return ChatPost.objects.filter(thread=thread, kind__in=THREAD_KINDS).order_by(
        "created_at", "pk"
    )


def thread_counts(thread: ChatThread) -> dict[str, int]:
    """The thread's posts by delivery status, every status present (one query)."""
    counts = dict.fromkeys(PostStatus.values, 0)
    rows = ChatPost.objects.filter(thread=thread).values_list("status").annotate(n=Count("pk"))
    counts.update(dict(rows.order_by()))
    return counts


def names_for(workspace_id: int, posts: list[ChatPost]) -> dict[str, str]:
    """Chat user id → the name the chat gave (one query), for "only visible to"."""
    users = {
        str(p.payload.get("user", ""))
        for p in posts
        if p.kind in (PostKind.REPLY, PostKind.VIEW) and isinstance(p.payload, dict)
    } - {""}
    if not users:
        return {}
    rows = ChatIdentity.objects.filter(workspace_id=workspace_id, external_user__in=users)
    return {
        i.external_user: i.external_name or i.external_user
        for i in rows.only("external_user", "external_name")
    }


def thread_link(thread: ChatThread, state: ChatPost | None) -> str:
    """Where the thread is in the chat: a permalink the posts stored, else one made from
    the ids ("" when not known yet)."""
    if state is not None and isinstance(state.payload, dict):
        stored = str(state.payload.get("permalink", ""))
        if stored.startswith(("https://", "http://")):
            return stored
    workspace = thread.workspace
    if not thread.root or not thread.channel:
        return ""
    if workspace.surface == Surface.MATTERMOST:
        return f"{workspace.api_url.rstrip('/')}/_redirect/pl/{thread.root}"
    host = urlsplit(workspace.api_url).hostname or ""
    if workspace.external_team and (host == "slack.com" or host.endswith(".slack.com")):
        return (
            f"https://app.slack.com/client/{workspace.external_team}/{thread.channel}"
            f"/thread/{thread.channel}-{thread.root}"
        )
    return ""


# --- the incident page's panel -------------------------------------------------------------------
def incident_threads(incident_id: int) -> list[ChatThread]:
    """The incident's threads with their posts counted by delivery state (one query)."""
    waiting = Q(posts__status__in=(PostStatus.PENDING, PostStatus.SENDING, PostStatus.RETRYING))
    return list(
        ChatThread.objects.filter(incident_id=incident_id)
        .select_related("workspace")
        .annotate(
            sent_count=Count("posts", filter=Q(posts__status=PostStatus.SENT)),
            waiting_count=Count("posts", filter=waiting),
            failed_count=Count("posts", filter=Q(posts__status=PostStatus.FAILED)),
        )
        .order_by("workspace__name")
    )
