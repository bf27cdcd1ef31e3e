"""A request from chat, from the surface's view to its answer.

`interaction_receive` (the view, within Slack's 3 s): record it once under its key (a
retry or a replay finds the row, counts itself in `repeats` and changes nothing else),
queue the worker when the row commits, say what to show at once. No outgoing call.

`interaction_run` (the worker): claim the row (a conditional UPDATE: one worker runs it,
once), find the console user the chat user acts as (chatops/identity.py), refuse the
unmapped (reading is allowed) and the too fast, run the action (chatops/actions/) as that
user through the chat's surface and in their language, record the outcome, write the
audit row, answer the person. A refusal is a service's own (DomainError, PermissionDenied)
in the reader's language; anything else is FAILED, logged, and answered as such.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone, translation

from chatops import replies
from chatops.actions import ACTIONS, READ_ONLY, Context, Result
from chatops.identity import acting_user, identity_resolve
from chatops.messages import Message
from chatops.models import (
    ChatIdentity,
    ChatInteraction,
    ChatThread,
    InteractionKind,
    InteractionStatus,
    TeamChannel,
    Workspace,
)
from chatops.requests import ChatRequest
from chatops.services.audit import chat_action_audit
from console.errors import DomainError, page_message
from console.preferences.services import preference_get
from console.surface import acting_through
from console.task_queue import tasks_send_each
from incidents.models import Incident
from notifications.links import console_url

log = logging.getLogger(__name__)
TASK = "chatops.tasks.interaction_run"
WINDOW = timedelta(seconds=60)  # the rate limit's minute
# A request whose worker has not claimed it within this long is queued again (beat);
# one older than STALE is not run any more (the person has moved on): answered instead.
STALE = timedelta(minutes=10)
# A claim older than this belongs to a worker that died (the task's hard limit is 120 s).
RUN_LEASE = timedelta(minutes=5)
OUTCOME_MAX = 2000
S = InteractionStatus


@dataclass(frozen=True)
class Receipt:
    interaction_id: int
    duplicate: bool  # a retry or replay of a recorded request: nothing more done
    ack_text: str  # what to show at once, in the user's language ("" = nothing)


# --- receive ------------------------------------------------------------------------------
def _clean(value: Any) -> Any:
    """Without NUL characters, which PostgreSQL refuses in text and JSON (a pasted one
    would make the view fail and the chat retry)."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _recorded(request: ChatRequest) -> dict[str, Any]:
    """What the row keeps of the request: its arguments and where it came from (never a
    secret: the reply address is encrypted in its own column)."""
    return {
        **_clean(request.args),
        "channel": request.channel,
        "thread": request.thread,
        "trigger": request.trigger,
        "name": request.external_name,
        "surface": request.surface,
    }


def _ack_language(request: ChatRequest) -> str:
    """The user's own language when they are already known, else the workspace's."""
    own = (
        ChatIdentity.objects.filter(
            workspace_id=request.workspace_id,
            external_user=request.external_user,
            user__is_active=True,
        )
        .values_list("user__console_preference__language", flat=True)
        .first()
    )
    if own:
        return own
    workspace = Workspace.objects.filter(pk=request.workspace_id).values_list("language", flat=True)
    return workspace.first() or settings.LANGUAGE_CODE


def _enqueue(interaction_id: int) -> None:
    # Never raises: Slack's 3 s are not spent in kombu's retries; beat queues it again.
    tasks_send_each(TASK, [interaction_id], again="beat queues it again")


def interaction_receive(*, request: ChatRequest) -> Receipt:
    incident_id = request.incident_id
    if incident_id is not None and not Incident.objects.filter(pk=incident_id).exists():
        incident_id = None  # the action says the incident does not exist
    try:
        with transaction.atomic():
            interaction = ChatInteraction.objects.create(
                workspace_id=request.workspace_id, key=request.key[:200], kind=request.kind,
                action=request.action[:32], external_user=request.external_user[:64],
                incident_id=incident_id, request=_recorded(request),
                reply_url=request.reply_url, received_at=timezone.now(),
            )  # fmt: skip
    except IntegrityError:
        seen = ChatInteraction.objects.filter(
            workspace_id=request.workspace_id, key=request.key[:200]
        )
        seen.update(repeats=F("repeats") + 1)
        log.info("chatops: %s %s again (retry %s): nothing done", request.action, request.key,
                 request.retry)  # fmt: skip
        return Receipt(seen.values_list("pk", flat=True).first() or 0, True, "")
    pk = interaction.pk
    transaction.on_commit(lambda: _enqueue(pk))
    ack = ""
    if request.kind == InteractionKind.COMMAND:  # a press or a dialog shows nothing
        with translation.override(_ack_language(request)):
            ack = translation.gettext("Working on it…")
    return Receipt(pk, False, ack)


# --- run ----------------------------------------------------------------------------------
def _claim(interaction_id: int) -> bool:
    """Take the row: only a RECEIVED one nobody took (done_at stamps the claim)."""
    return bool(
        ChatInteraction.objects.filter(pk=interaction_id, status=S.RECEIVED, done_at=None).update(
            done_at=timezone.now()
        )
    )


def _language(interaction: ChatInteraction, user: User | None) -> str:
    """The user's preference, else the thread's or channel's language, else the workspace's."""
    if user is not None:
        pref = preference_get(user=user)
        if pref is not None and pref.language:
            return pref.language
    channel = str((interaction.request or {}).get("channel", ""))
    threads = ChatThread.objects.filter(workspace_id=interaction.workspace_id)
    if interaction.incident_id:
        threads = threads.filter(incident_id=interaction.incident_id)
    elif channel:
        threads = threads.filter(channel=channel, own_channel=True)
    else:
        threads = threads.none()
    found = threads.exclude(language="").values_list("language", flat=True).first()
    if not found and channel:
        found = (
            TeamChannel.objects.filter(workspace_id=interaction.workspace_id, channel=channel)
            .exclude(language="")
            .values_list("language", flat=True)
            .first()
        )
    return found or interaction.workspace.language or settings.LANGUAGE_CODE


def _rate_wait(interaction: ChatInteraction) -> int:
    """Seconds until this chat user may act again (0: now). Counts their requests of the
    last minute, this one included, except the read-only ones."""
    limit = settings.CHAT_ACTIONS_PER_MINUTE
    since = interaction.received_at - WINDOW
    recent = (
        ChatInteraction.objects.filter(
            workspace_id=interaction.workspace_id,
            external_user=interaction.external_user,
            received_at__gt=since,
            received_at__lte=interaction.received_at,
        )
        .exclude(action__in=READ_ONLY)
        .order_by("received_at")
    )
    count = recent.count()
    if count <= limit:
        return 0
    # The minute must forget the oldest (count - limit) of them.
    times = list(recent.values_list("received_at", flat=True)[: count - limit])
    wait = (times[-1] + WINDOW - timezone.now()).total_seconds()
    return max(1, math.ceil(wait))


def _refused(said: str, message: Message, incident_id: int | None = None) -> Result:
    return Result(said, message, S.REFUSED, incident_id=incident_id)


def _decide(ctx: Context, identity: ChatIdentity) -> Result:
    interaction = ctx.interaction
    action = ACTIONS.get(interaction.action)
    if action is None:
        text = translation.gettext("Unknown action %(action)s.") % {"action": interaction.action}
        return _refused(f"unknown action {interaction.action}", replies.refused_message(text))
    if ctx.user is None and interaction.action not in READ_ONLY:
        name = identity.external_name or interaction.external_user
        admin = console_url() + replies.ADMIN_LINK_PATH
        message = replies.unmapped_message(name=name, email=identity.email, admin_url=admin)
        return _refused("not linked to a console user", message)
    if interaction.action not in READ_ONLY:
        wait = _rate_wait(interaction)
        if wait:
            limit = settings.CHAT_ACTIONS_PER_MINUTE
            message = replies.slow_down_message(limit=limit, seconds=wait)
            return _refused(f"rate limited: more than {limit} a minute", message)
    try:
        with acting_through(ctx.surface):
            return action(ctx)
    except (DomainError, PermissionDenied) as exc:
        with translation.override(None):  # the record in English, as the API says it
            english = str(exc) or page_message(exc)
        return _refused(english, replies.refused_message(page_message(exc)))


def _finish(
    interaction: ChatInteraction,
    result: Result,
    *,
    user: User | None,
    identity: ChatIdentity | None,
    chat_name: str,
) -> None:
    interaction.status = result.status
    interaction.outcome = result.said[:OUTCOME_MAX]
    interaction.done_at = timezone.now()
    interaction.identity = identity
    interaction.user = user
    if result.incident_id is not None:
        interaction.incident_id = result.incident_id
    interaction.save(update_fields=["status", "outcome", "done_at", "identity", "user", "incident"])
    chat_action_audit(
        interaction=interaction,
        surface=interaction.workspace.surface,
        user=user,
        chat_name=chat_name,
        outcome=result.said,
        run_id=result.run_id,
    )


def _answer(ctx: Context, message: Message | None) -> None:
    if message is None:
        return
    try:
        ctx.reply(message)
    except Exception:  # the outcome is recorded already; a lost answer must not undo that
        log.exception("chatops: could not answer interaction %s", ctx.interaction.pk)


def interaction_run(*, interaction_id: int) -> None:
    if not _claim(interaction_id):
        return  # done, or another worker runs it
    interaction = ChatInteraction.objects.select_related("workspace").get(pk=interaction_id)
    workspace = interaction.workspace
    args = dict(interaction.request or {})
    chat_name = str(args.get("name") or interaction.external_user)
    ctx = Context(interaction=interaction, workspace=workspace, user=None,
                  language=workspace.language, args=args)  # fmt: skip
    identity: ChatIdentity | None = None
    try:
        identity = identity_resolve(
            workspace=workspace, external_user=interaction.external_user, external_name=chat_name
        )
        chat_name = identity.external_name or chat_name
        ctx.user = acting_user(identity)
        ctx.language = _language(interaction, ctx.user)
        with translation.override(ctx.language):
            result = _decide(ctx, identity)
            if result.run_id is None and ctx.run_id is not None:
                result = replace(result, run_id=ctx.run_id)
            _finish(interaction, result, user=ctx.user, identity=identity, chat_name=chat_name)
            _answer(ctx, result.message)
    except Exception as exc:
        log.exception("chatops: interaction %s (%s) failed", interaction_id, interaction.action)
        with translation.override(ctx.language):
            failed = Result(f"failed: {exc!r}", replies.failed_message(), S.FAILED)
            _finish(interaction, failed, user=ctx.user, identity=identity, chat_name=chat_name)
            _answer(ctx, failed.message)


# --- beat -----------------------------------------------------------------------------------
def interactions_requeue() -> int:
    """Requests a broker outage or a dead worker left behind: unclaimed ones queued again
    (too old ones answered instead), a claim whose worker died recorded as FAILED. How
    many were queued."""
    now = timezone.now()
    waiting = ChatInteraction.objects.filter(status=S.RECEIVED, done_at=None)
    due = list(
        waiting.filter(
            received_at__lt=now - timedelta(seconds=settings.CHAT_REQUEUE_SECONDS),
            received_at__gte=now - STALE,
        ).values_list("pk", flat=True)[:500]
    )
    for pk in due:
        _enqueue(pk)
    for pk in waiting.filter(received_at__lt=now - STALE).values_list("pk", flat=True)[:100]:
        if _claim(pk):
            _given_up(pk, "not run: no worker took it within 10 minutes")
    dead = ChatInteraction.objects.filter(status=S.RECEIVED, done_at__lt=now - RUN_LEASE)
    for pk in dead.values_list("pk", flat=True)[:100]:
        # Claimed again (a conditional UPDATE), so two beats do not both answer it.
        if dead.filter(pk=pk).update(done_at=now):
            _given_up(pk, "failed: the worker stopped while running it")
    return len(due)


def _given_up(interaction_id: int, said: str) -> None:
    interaction = ChatInteraction.objects.select_related("workspace").get(pk=interaction_id)
    ctx = Context(interaction=interaction, workspace=interaction.workspace, user=None,
                  language=interaction.workspace.language,
                  args=dict(interaction.request or {}), answers=10)  # fmt: skip
    chat_name = str(ctx.args.get("name") or interaction.external_user)
    with translation.override(ctx.language):
        result = Result(said, replies.failed_message(), S.FAILED)
        _finish(interaction, result, user=interaction.user, identity=interaction.identity,
                chat_name=chat_name)  # fmt: skip
        _answer(ctx, result.message)
