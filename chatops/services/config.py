"""The chat set-up's writes: installations and their team channels (the admin), who a
chat user is in the console (the admin's link), and sending a failed post again (the
/chat/ page). Each write is checked against the actor's role and leaves an audit row
(kind CHAT_CONFIG) with the old and new values; a token or a secret is never in it,
only whether it changed.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from chatops.models import (
    ChatIdentity,
    ChatPost,
    MappedBy,
    PostKind,
    PostStatus,
    TeamChannel,
    Workspace,
)
from chatops.permissions import CONFIGURE, LINK, RETRY
from chatops.posts.queue import post_send_enqueue, thread_flush_enqueue
from console.audit.models import AuditKind, AuditMethod
from console.audit.services import audit_record
from console.errors import DomainError, NotFound
from console.outgoing import OutgoingRefused, url_check
from console.permissions import require

AUDIT_KIND = AuditKind.CHAT_CONFIG
SECRETS = ("bot_token", "signing_secret")
# What the audit keeps of an installation (everything but the secrets).
SHOWN = ("name", "surface", "enabled", "api_url", "external_team", "default_channel",
         "own_channel_severities", "channel_prefix", "include_drills", "language")  # fmt: skip


def _seen(workspace: Workspace) -> dict[str, Any]:
    return {name: getattr(workspace, name) for name in SHOWN}


def _audit(actor: User, method: str, reason: str, old: Any, new: Any) -> None:
    audit_record(kind=AUDIT_KIND, method=method, user=actor, reason=reason, old=old, new=new)


def api_url_check(url: str) -> None:
    """The installation's API address through the outgoing guard (console/outgoing): no
    credentials in it, and no internal address unless OUTGOING_URL_ALLOWLIST admits it
    (the local test servers, a Mattermost inside the cluster)."""
    try:
        url_check(url)
    except OutgoingRefused as exc:
        raise DomainError(exc.message, code="invalid", params=exc.params) from None


# --- installations ------------------------------------------------------------------------
@transaction.atomic
def workspace_save(
    *, actor: User, workspace: Workspace, method: str = AuditMethod.ADMIN
) -> Workspace:
    """Create or change an installation (its fields already set on `workspace`), after
    the model's own checks and, when the API address is new, the outgoing guard's."""
    require(actor, CONFIGURE, _("change the chat set-up"))
    stored = (
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        if workspace.pk
        else None
    )
    workspace.full_clean()
    if stored is None or stored.api_url != workspace.api_url:
        api_url_check(workspace.api_url)
    changed = [s for s in SECRETS if stored is None or getattr(stored, s) != getattr(workspace, s)]
    workspace.save()
    new = {**_seen(workspace), "secrets_changed": changed}
    verb = "changed" if stored is not None else "added"
    _audit(actor, method, f"{verb} chat workspace {workspace.name} (#{workspace.pk})",
           _seen(stored) if stored is not None else None, new)  # fmt: skip
    return workspace


@transaction.atomic
def workspace_delete(*, actor: User, workspace_id: int, method: str = AuditMethod.ADMIN) -> None:
    require(actor, "chatops.delete_workspace", _("remove a chat installation"))
    workspace = Workspace.objects.select_for_update().filter(pk=workspace_id).first()
    if workspace is None:
        raise NotFound(
            gettext_noop("Chat workspace #%(id)s does not exist."), params={"id": workspace_id}
        )
    old = _seen(workspace)
    workspace.delete()
    _audit(actor, method, f"removed chat workspace {old['name']} (#{workspace_id})", old, None)


def _channel_seen(channel: TeamChannel) -> dict[str, Any]:
    return {
        "workspace": channel.workspace.name,
        "team": channel.team.slug,
        "channel": channel.channel,
        "language": channel.language,
    }


@transaction.atomic
def team_channel_save(
    *, actor: User, channel: TeamChannel, method: str = AuditMethod.ADMIN
) -> TeamChannel:
    """Create or change where a team's incidents are threaded in one installation."""
    require(actor, CONFIGURE, _("change the chat set-up"))
    stored = (
        TeamChannel.objects.select_related("workspace", "team").filter(pk=channel.pk).first()
        if channel.pk
        else None
    )
    channel.full_clean()
    channel.save()
    _audit(actor, method,
           f"{'changed' if stored else 'added'} the chat channel of team {channel.team.slug} "
           f"in {channel.workspace.name}",
           _channel_seen(stored) if stored else None, _channel_seen(channel))  # fmt: skip
    return channel


@transaction.atomic
def team_channel_delete(*, actor: User, channel_id: int, method: str = AuditMethod.ADMIN) -> None:
    require(actor, CONFIGURE, _("change the chat set-up"))
    channel = TeamChannel.objects.select_related("workspace", "team").filter(pk=channel_id).first()
    if channel is None:
        return  # gone already (deleted with its workspace)
    old = _channel_seen(channel)
    channel.delete()
    reason = f"removed the chat channel of team {old['team']} in {old['workspace']}"
    _audit(actor, method, reason, old, None)


# --- identities ---------------------------------------------------------------------------
def _identity_seen(identity: ChatIdentity) -> dict[str, Any]:
    return {
        "workspace": identity.workspace.name,
        "chat_user": identity.external_user,
        "chat_name": identity.external_name,
        "user": identity.user.get_username() if identity.user is not None else None,
        "mapped_by": identity.mapped_by,
    }


@transaction.atomic
def identity_link(
    *, actor: User, identity_id: int, user_id: int | None, method: str = AuditMethod.ADMIN
) -> ChatIdentity:
    """Link a chat user to a console user (they then act as that user), or unlink them
    (`user_id` None: they may read, not act). An admin's link is kept when the chat's
    profile is read again."""
    require(actor, LINK, _("link chat users to console users"))
    identity = (
        ChatIdentity.objects.select_for_update(of=("self",))
        .select_related("workspace", "user")
        .filter(pk=identity_id)
        .first()
    )
    if identity is None:
        raise NotFound(
            gettext_noop("Chat identity #%(id)s does not exist."), params={"id": identity_id}
        )
    old = _identity_seen(identity)
    user = None
    if user_id is not None:
        user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
        if user is None:
            raise DomainError(
                gettext_noop("Console user #%(id)s does not exist or is inactive."),
                code="invalid",
                params={"id": user_id},
            )
    identity.user = user
    identity.mapped_by = MappedBy.ADMIN if user is not None else MappedBy.NONE
    identity.checked_at = timezone.now()
    identity.save(update_fields=["user", "mapped_by", "checked_at"])
    who = identity.external_name or identity.external_user
    reason = (
        f"linked chat user {who} in {identity.workspace.name} to {user.get_username()}"
        if user is not None
        else f"unlinked chat user {who} in {identity.workspace.name}"
    )
    _audit(actor, method, reason, old, _identity_seen(identity))
    return identity


# --- posts --------------------------------------------------------------------------------
@transaction.atomic
def post_retry(*, post_id: int, actor: User, method: str = AuditMethod.SESSION) -> ChatPost:
    """Send a failed post again (after the chat's outage or its set-up was fixed): back
    to waiting with its attempts counted from zero, queued once this commits."""
    require(actor, RETRY, _("send chat posts again"))
    post = ChatPost.objects.select_for_update().filter(pk=post_id).first()
    if post is None:
        raise NotFound(gettext_noop("Chat post #%(id)s does not exist."), params={"id": post_id})
    if post.kind == PostKind.VIEW:
        raise DomainError(
            gettext_noop(
                "A dialog cannot be sent again: the chat's trigger for it expired within "
                "seconds. Press the button in the chat again."
            )
        )
    if post.status != PostStatus.FAILED:
        raise DomainError(
            gettext_noop("Chat post #%(id)s is %(status)s; only a failed one is sent again."),
            params={"id": post_id, "status": post.get_status_display()},
        )
    old = {"status": post.status, "attempts": post.attempts, "last_error": post.last_error}
    post.status = PostStatus.PENDING
    post.attempts = 0
    post.next_attempt_at = timezone.now()
    post.claimed_at = None
    post.last_error = ""  # kept in the audit row
    post.save(update_fields=["status", "attempts", "next_attempt_at", "claimed_at", "last_error"])
    _audit(actor, method, f"sent chat post #{post.pk} ({post.kind}) again", old,
           {"status": post.status, "attempts": 0})  # fmt: skip
    # A thread's post goes out with its thread, in order; an answer to a person alone.
    if post.thread_id is not None:
        thread_flush_enqueue([post.thread_id])
    else:
        post_send_enqueue([post.pk])
    return post
