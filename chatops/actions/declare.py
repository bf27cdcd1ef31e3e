"""`/incident`'s own commands: declare an incident, page a team's on-call, help."""

from __future__ import annotations

import hashlib

from django.utils.translation import gettext, gettext_noop

from chatops.actions.base import Context, Result, done
from chatops.commands import USAGE
from chatops.messages import Message
from console.errors import DomainError, NotFound
from incidents.services.declare import TITLE_MAX_CHARS, incident_declare
from pager.models import Team
from pager.paging.services.manual import oncall_page

# An incident declared by `/incident page <team> <message>` (no #id): serious enough that
# a person wants someone woken, like the web's "page a team" default.
PAGE_SEVERITY = "SEV2"


def declare(ctx: Context) -> Result:
    incident = incident_declare(
        actor=ctx.actor(),
        title=str(ctx.args.get("title", "")),
        severity=str(ctx.args.get("severity", "")),
        namespace=str(ctx.args.get("namespace", "")),
    )
    ctx.interaction.incident_id = incident.pk
    return done(
        gettext_noop("Incident #%(id)s declared (%(severity)s): %(title)s"),
        {"id": incident.pk, "severity": incident.severity, "title": incident.title},
        incident_id=incident.pk,
    )


def _page_key(ctx: Context) -> str:
    """One chat request pages each person once, whatever retries the worker makes."""
    seed = f"{ctx.workspace.pk}:{ctx.interaction.key}".encode()
    return "chat-" + hashlib.sha256(seed).hexdigest()[:32]


def page(ctx: Context) -> Result:
    team = str(ctx.args.get("team", ""))
    message = str(ctx.args.get("message", "")).strip()
    if not team:
        raise DomainError(gettext_noop("Which team? Name it by its slug."), code="invalid")
    incident_id = ctx.incident_maybe()
    actor = ctx.actor()
    if incident_id is not None:
        pages = oncall_page(
            actor=actor, team_slug=team, incident_id=incident_id, message=message,
            key=_page_key(ctx),
        )  # fmt: skip
        names = sorted({p.user.get_username() for p in pages if p.user is not None})
        return done(
            gettext_noop("Paged team %(team)s's on-call for incident #%(id)s: %(people)s."),
            {"team": team, "id": incident_id, "people": ", ".join(names) or "-"},
            incident_id=incident_id,
        )
    # No incident yet: declare one the team owns; the pager's routing pages its on-call.
    if not Team.objects.filter(slug=team).exists():
        raise NotFound(
            gettext_noop("There is no team %(slug)s."), params={"slug": repr(team[:100])}
        )
    title = message if len(message) <= TITLE_MAX_CHARS else message[: TITLE_MAX_CHARS - 1] + "…"
    incident = incident_declare(
        actor=actor,
        title=title,
        severity=str(ctx.args.get("severity") or PAGE_SEVERITY),
        labels={"team": team},
        summary=message if title != message else "",
    )
    ctx.interaction.incident_id = incident.pk
    return done(
        gettext_noop("Incident #%(id)s declared for team %(team)s; the pager pages its on-call."),
        {"id": incident.pk, "team": team},
        incident_id=incident.pk,
    )


def help_(ctx: Context) -> Result:
    text = gettext(
        "Buttons on an incident's message: Acknowledge, Take command, Silence, Mitigate, "
        "Resolve, Request (the recommended action, after its preview), Approve and Reject "
        "(a run waiting for a second person). You act as your console account, with its role."
    )
    return Result("showed the help", Message(text=f"{USAGE}\n\n{text}", lines=(str(USAGE), text)))
