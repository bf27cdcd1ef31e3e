"""The incident's buttons and notes: acknowledge, take command, silence, mitigate,
resolve, note, status, each through the service the incident page calls."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, gettext_noop

from chatops.actions.base import Context, Result, done
from chatops.messages import Button, Dialog, Input, Message
from chatops.models import InteractionKind, InteractionStatus, PostStatus
from chatops.threads.state import incident_state
from incidents.models import OPEN_STATUSES, Incident
from incidents.services import (
    incident_acknowledge,
    incident_commander_set,
    incident_mitigate,
    incident_note_add,
    incident_resolve,
    incident_silence_create,
)
from incidents.services.command import NoCommander
from incidents.services.lifecycle import AlertsFiring
from incidents.silences.services import DEFAULT_MINUTES, duration_text

OPEN_LISTED = 15  # incidents in "/incident status" without a number
TITLE_SHOWN = 80


def ack(ctx: Context) -> Result:
    incident_id = ctx.incident_id()
    incident_acknowledge(incident_id=incident_id, actor=ctx.actor())
    return done(gettext_noop("Incident #%(id)s acknowledged."), {"id": incident_id},
                incident_id=incident_id)  # fmt: skip


def command(ctx: Context) -> Result:
    incident_id = ctx.incident_id()
    actor = ctx.actor()
    incident_commander_set(incident_id=incident_id, actor=actor, commander_id=actor.pk)
    return done(gettext_noop("You are now in command of incident #%(id)s."), {"id": incident_id},
                incident_id=incident_id)  # fmt: skip


def silence(ctx: Context) -> Result:
    incident_id = ctx.incident_id()
    minutes = ctx.number("minutes") or DEFAULT_MINUTES
    made = incident_silence_create(
        incident_id=incident_id, actor=ctx.actor(), duration_minutes=minutes
    )
    return done(
        gettext_noop("Incident #%(id)s silenced for %(duration)s (%(count)s silence(s))."),
        {"id": incident_id, "duration": duration_text(minutes), "count": len(made)},
        incident_id=incident_id,
    )


def _flag(ctx: Context, name: str) -> bool:
    return str(ctx.args.get(name, "")).lower() in ("1", "true", "yes", "on")


def _ask(ctx: Context, verb: str, exc: AlertsFiring | NoCommander, value: dict[str, Any]) -> Result:
    """The move needs a confirmation: a dialog asking for it (and the reason), or when
    the trigger is gone, the refusal with a button that opens that dialog."""
    incident_id = int(value["incident"])
    why = exc.translated()
    title = gettext("Resolve #%(id)s") if verb == "resolve" else gettext("Mitigate #%(id)s")
    reason = str(ctx.args.get("reason", ""))
    dialog = Dialog(
        title=title % {"id": incident_id},
        action=verb,
        value=value,
        lines=(why,),
        inputs=(
            Input(
                "reason",
                gettext("Reason (it goes on the timeline)"),
                multiline=True,
                optional=isinstance(exc, NoCommander) and not value.get("confirm"),
                initial=reason,
            ),
        ),
        submit=gettext("Confirm"),
    )
    said = f"asked to confirm: {exc}"
    if ctx.trigger and ctx.interaction.kind != InteractionKind.DIALOG:
        post = ctx.dialog(dialog)
        if post is not None and post.status == PostStatus.SENT:
            return Result(said, None, InteractionStatus.REFUSED, incident_id=incident_id)
    button = Button(verb, gettext("Give a reason"), value, style="primary")
    message = Message(text=why, buttons=(button,))
    return Result(said, message, InteractionStatus.REFUSED, incident_id=incident_id)


def _move(ctx: Context, verb: str) -> Result:
    incident_id = ctx.incident_id()
    reason = str(ctx.args.get("reason", "")).strip()
    confirm, no_commander = _flag(ctx, "confirm"), _flag(ctx, "confirm_no_commander")
    try:
        if verb == "resolve":
            incident_resolve(
                incident_id=incident_id, actor=ctx.actor(), reason=reason, confirm=confirm,
                confirm_no_commander=no_commander,
            )  # fmt: skip
        else:
            incident_mitigate(
                incident_id=incident_id, actor=ctx.actor(), reason=reason, confirm=confirm
            )
    except AlertsFiring as exc:
        value = {"incident": incident_id, "confirm": True}
        if no_commander:
            value["confirm_no_commander"] = True
        return _ask(ctx, verb, exc, value)
    except NoCommander as exc:
        value = {"incident": incident_id, "confirm_no_commander": True}
        if confirm:
            value["confirm"] = True
        return _ask(ctx, verb, exc, value)
    if verb == "resolve":
        message = gettext_noop("Incident #%(id)s resolved.")
    else:
        message = gettext_noop("Incident #%(id)s mitigated.")
    return done(message, {"id": incident_id}, incident_id=incident_id)


def mitigate(ctx: Context) -> Result:
    return _move(ctx, "mitigate")


def resolve(ctx: Context) -> Result:
    return _move(ctx, "resolve")


def note(ctx: Context) -> Result:
    incident_id = ctx.incident_id()
    incident_note_add(
        incident_id=incident_id, actor=ctx.actor(), text=str(ctx.args.get("text", ""))
    )
    return done(gettext_noop("Note added to incident #%(id)s."), {"id": incident_id},
                incident_id=incident_id)  # fmt: skip


def _open_list(ctx: Context) -> Message:
    incidents = Incident.objects.filter(status__in=OPEN_STATUSES, is_demo=False)
    if not ctx.workspace.include_drills:
        incidents = incidents.filter(is_drill=False)
    rows = list(incidents.order_by("severity", "-triggered_at")[: OPEN_LISTED + 1])
    if not rows:
        return Message(text=gettext("No open incidents."))
    lines = tuple(
        f"#{i.pk} {i.severity} {i.get_status_display()}: {i.title[:TITLE_SHOWN]}"
        for i in rows[:OPEN_LISTED]
    )
    if len(rows) > OPEN_LISTED:
        lines += (gettext("…and more on the console's incident list."),)
    title = gettext("Open incidents")
    return Message(text="\n".join((title, *lines)), title=title, lines=lines)


def status(ctx: Context) -> Result:
    incident_id = ctx.incident_maybe()
    if incident_id is None:
        return Result("listed the open incidents", _open_list(ctx))
    message = incident_state(incident_id=incident_id, language=ctx.language)
    return Result(f"showed the state of #{incident_id}", message, incident_id=incident_id)
