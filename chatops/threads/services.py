"""One chat thread per incident and installation, and what goes into it.

A thread is made when an open incident first writes its timeline (or when asked): in the
owning team's channel (pager.routing decides the team; the team's TeamChannel in that
workspace, else the workspace's default channel), or in a channel of its own for the
severities the workspace names (SEV1 and SEV2 by default). Its root is the state message
(chatops/threads/state.py), edited in place; timeline entries are posted under it, one
post per incident per batch the timeline announces, worded in the thread's language.

Everything here records ChatPost rows and queues their sending (chatops/posts/): no call
to the chat is made here, so this can run in the request that wrote the timeline.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone, translation
from django.utils.text import slugify
from django.utils.translation import ngettext

from chatops.messages import Message
from chatops.models import ChatThread, PostKind, TeamChannel, Workspace
from chatops.posts.queue import thread_flush_enqueue
from chatops.posts.services import post_create
from chatops.threads.state import incident_state, state_digest
from drills import timeline_kinds as drill_kinds
from incidents.models import Incident, TimelineEvent, TimelineEventType
from incidents.related import timeline as related_kinds
from incidents.timeline_kinds import timeline_kind_label
from incidents.timeline_text import timeline_text
from pager import timeline_kinds as pager_kinds
from pager.routing import route
from postmortems import timeline_kinds as postmortem_kinds
from runbooks import timeline_kinds as runbook_kinds

log = logging.getLogger(__name__)
K = TimelineEventType
CHANNEL_NAME_MAX = 80  # Slack's limit (Mattermost's surface shortens further if it must)
LINES_PER_POST = 20  # a storm's batch: the rest is counted, the page has them all
LINE_MAX = 2900  # one line fits a Slack section (3000 characters)
# Bookkeeping, not news: a replayed webhook delivery says nothing about the incident (its
# alerts, if any changed, have their own entries). Everything else is posted: alert
# entries are one per delivery that changed something (Alertmanager's unchanged repeats
# write none), and the pager's are one per page.
SKIPPED_KINDS = frozenset({K.WEBHOOK_REPLAYED})
# Entries that cannot change what the state message says: their batch is not worth
# building it for (the digest would say "unchanged" anyway).
STATE_NEUTRAL_KINDS = frozenset(
    {
        K.NOTE, K.WEBHOOK_REPLAYED, K.SILENCE_CREATED, K.SILENCE_EXPIRED,
        pager_kinds.PAGE, pager_kinds.ESCALATION, pager_kinds.MAINTENANCE,
        runbook_kinds.RUNBOOK_STEP, runbook_kinds.DIAGNOSIS_CONFIRMED,
        postmortem_kinds.POSTMORTEM, postmortem_kinds.ACTION_ITEM, drill_kinds.DRILL,
        related_kinds.LINKED, related_kinds.UNLINKED,
    }
)  # fmt: skip


def thread_ensure(*, incident_id: int) -> list[ChatThread]:
    """The incident's thread in every enabled workspace, made (with its first posts
    recorded and queued) where it is missing. Demo incidents are never threaded; drills
    only where the workspace includes them; a thread is made only for an open incident
    (a late entry on an old resolved one opens nothing)."""
    incident = Incident.objects.filter(pk=incident_id).first()
    if incident is None:
        return []
    workspaces = list(Workspace.objects.filter(enabled=True).order_by("pk"))
    existing = ChatThread.objects.filter(incident_id=incident_id, workspace__in=workspaces)
    threads, made = _ensure(incident, workspaces, {t.workspace_id: t for t in existing})
    thread_flush_enqueue(made)
    return threads


def _ensure(
    incident: Incident, workspaces: list[Workspace], existing: dict[int, ChatThread]
) -> tuple[list[ChatThread], set[int]]:
    """The incident's threads, and the ids of those made now (their state is new; the
    caller queues their flush)."""
    if incident.is_demo:
        return [], set()
    wanted = [w for w in workspaces if w.include_drills or not incident.is_drill]
    missing = [w for w in wanted if w.pk not in existing]
    threads = [existing[w.pk] for w in wanted if w.pk in existing]
    if not missing or not incident.is_open:
        return threads, set()
    team = route(incident).team
    channels = (
        {c.workspace_id: c for c in TeamChannel.objects.filter(team=team, workspace__in=missing)}
        if team is not None
        else {}
    )
    made: set[int] = set()
    for workspace in missing:
        thread, created = _thread_make(incident, workspace, channels.get(workspace.pk))
        threads.append(thread)
        if created:
            made.add(thread.pk)
    return threads, made


def channel_name(workspace: Workspace, incident: Incident) -> str:
    """f"{prefix}{id}-{slug of title}": lowercase letters, digits, hyphens and
    underscores, at most 80 characters (Slack's rules; a title in Chinese leaves the id)."""
    prefix = slugify(workspace.channel_prefix.lower()).replace("_", "-") or "inc-"
    if workspace.channel_prefix.endswith(("-", "_")) and not prefix.endswith("-"):
        prefix += "-"
    name = f"{prefix}{incident.pk}-{slugify(incident.title)}".lower()
    return name[:CHANNEL_NAME_MAX].rstrip("-_") or f"inc-{incident.pk}"


@transaction.atomic
def _thread_make(
    incident: Incident, workspace: Workspace, team_channel: TeamChannel | None
) -> tuple[ChatThread, bool]:
    """The thread and its first posts (its channel, its state message), in one
    transaction: a thread never exists without them."""
    language = (team_channel.language if team_channel else "") or workspace.language
    own = incident.severity in (workspace.own_channel_severities or [])
    channel = "" if own else (team_channel.channel if team_channel else workspace.default_channel)
    thread, created = ChatThread.objects.get_or_create(
        incident=incident,
        workspace=workspace,
        defaults={"channel": channel, "own_channel": own, "language": language},
    )
    if not created:
        return thread, False
    if own:
        name = channel_name(workspace, incident)
        post_create(
            workspace_id=workspace.pk, kind=PostKind.CHANNEL, key=f"channel:{thread.pk}",
            payload={"name": name, "members": []}, thread_id=thread.pk,
        )  # fmt: skip
    message = incident_state(incident_id=incident.pk, language=language)
    post_create(
        workspace_id=workspace.pk, kind=PostKind.STATE, key=f"state:{thread.pk}",
        payload={"message": message.as_dict()}, thread_id=thread.pk,
    )  # fmt: skip
    thread.state_digest = state_digest(message)
    ChatThread.objects.filter(pk=thread.pk).update(state_digest=thread.state_digest)
    return thread, True


def timeline_events_post(*, events: list[TimelineEvent]) -> int:
    """The `timeline_appended` receiver's work (after the writer's commit): per incident,
    its threads (made for a new incident's first entries), ONE timeline post per thread
    with the batch's lines in the thread's language, and a state edit when what the state
    message says changed. Queues each touched thread's flush. Returns how many posts were
    recorded. A few queries per incident; no call to the chat."""
    by_incident: dict[int, list[TimelineEvent]] = defaultdict(list)
    for event in sorted(events, key=lambda e: (e.occurred_at, e.pk or 0)):
        by_incident[event.incident_id].append(event)
    if not by_incident:
        return 0
    workspaces = list(Workspace.objects.filter(enabled=True).order_by("pk"))
    if not workspaces:
        return 0  # no chat installed: one query per batch
    incidents = Incident.objects.in_bulk(list(by_incident))
    existing: dict[int, dict[int, ChatThread]] = defaultdict(dict)
    for thread in ChatThread.objects.filter(
        incident_id__in=list(incidents), workspace__in=workspaces
    ):
        existing[thread.incident_id][thread.workspace_id] = thread
    actors = _actor_names(events)
    recorded, touched = 0, set[int]()
    for incident_id, batch in by_incident.items():
        incident = incidents.get(incident_id)
        if incident is None:
            continue
        try:
            recorded += _incident_post(incident, batch, workspaces, existing[incident_id],
                                       actors, touched)  # fmt: skip
        except Exception:  # one incident's trouble must not cost the others their posts
            log.exception("chatops: could not post incident #%s's entries", incident_id)
    thread_flush_enqueue(touched)
    return recorded


def _incident_post(
    incident: Incident,
    batch: list[TimelineEvent],
    workspaces: list[Workspace],
    existing: dict[int, ChatThread],
    actors: dict[int, str],
    touched: set[int],
) -> int:
    threads, made = _ensure(incident, workspaces, existing)
    touched |= made
    shown = [e for e in batch if e.kind not in SKIPPED_KINDS]
    state_may_change = any(e.kind not in STATE_NEUTRAL_KINDS for e in batch)
    states: dict[str, Message] = {}  # per language: threads may differ
    recorded = 0
    for thread in threads:
        if shown:
            post = post_create(
                workspace_id=thread.workspace_id, kind=PostKind.TIMELINE,
                key=f"timeline:{shown[0].pk}", thread_id=thread.pk,
                payload={"message": _lines(shown, thread.language, actors).as_dict()},
            )  # fmt: skip
            if post is not None:
                recorded += 1
                touched.add(thread.pk)
        if state_may_change and thread.pk not in made and _state_edit(thread, states):
            recorded += 1
            touched.add(thread.pk)
    return recorded


def _state_edit(thread: ChatThread, states: dict[str, Message]) -> bool:
    """Record an edit of the state message when it says something new; True if so."""
    if thread.language not in states:
        states[thread.language] = incident_state(
            incident_id=thread.incident_id, language=thread.language
        )
    message = states[thread.language]
    digest = state_digest(message)
    if digest == thread.state_digest:
        return False
    post = post_create(
        workspace_id=thread.workspace_id, kind=PostKind.STATE_EDIT,
        key=f"state:{thread.pk}:{digest}", payload={"message": message.as_dict()},
        thread_id=thread.pk,
    )  # fmt: skip
    ChatThread.objects.filter(pk=thread.pk).update(state_digest=digest)
    thread.state_digest = digest
    return post is not None


def _actor_names(events: Iterable[TimelineEvent]) -> dict[int, str]:
    ids = {e.actor_id for e in events if e.actor_id is not None}
    if not ids:
        return {}
    users = get_user_model().objects.filter(pk__in=ids)
    return dict(users.values_list("pk", "username"))


def _lines(events: list[TimelineEvent], language: str, actors: dict[int, str]) -> Message:
    """The batch's entries as lines in `language`: time, kind, who, what (as the
    incident page words them: incidents/timeline_text.py)."""
    with translation.override(language):
        lines = []
        for event in events[:LINES_PER_POST]:
            when = timezone.localtime(event.occurred_at).strftime("%H:%M:%S")
            who = actors.get(event.actor_id or 0) or event.source
            text = timeline_text(event.kind, event.message, event.payload)
            line = f"{when} {timeline_kind_label(event.kind)} · {who}"
            line = f"{line}: {text}" if text else line
            lines.append(line if len(line) <= LINE_MAX else line[: LINE_MAX - 1] + "…")
        more = len(events) - LINES_PER_POST
        if more > 0:
            lines.append(
                ngettext(
                    "… and %(count)s more entry on the incident's page.",
                    "… and %(count)s more entries on the incident's page.",
                    more,
                )
                % {"count": more}
            )
    return Message(text="\n".join(lines), lines=tuple(lines))
