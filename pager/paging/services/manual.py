"""Paging a team's on-call people now, by hand, for an open incident: a person brings
another team in (the page, the API, a chat's `/incident page`).

The pages are made as the escalation makes them (pager/escalation/steps.py): a Page row
per person with its deliveries planned from their contact methods (failed at once for a
person with none), inserted under a unique key and handed to the sending queue when the
transaction commits. The key is `manual:<incident>:<team>:<request key>:u<user>`, so the
same request (a retried POST, a chat retry: the caller's `key`) pages each person once.

A Page belongs to an escalation: the incident's current one, whatever its state (an
acknowledged or exhausted escalation is left as it is; the pages only join it, so an
acknowledgement marks them too). An incident without one yet (its start task still
queued, or lost) is started first, exactly as the start task would start it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from uuid import uuid4

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError, NotFound
from console.permissions import require
from console.surface import current_surface
from console.texts import join
from incidents import permissions as incident_perms
from incidents.models import Incident, IncidentStatus
from incidents.services.timeline import incident_event_record
from incidents.transitions import status_word
from pager import timeline_kinds
from pager.escalation.services import escalation_start
from pager.escalation.steps import page_insert
from pager.escalation.timeline import Parts, part
from pager.models import (
    ContactMethod,
    Escalation,
    Page,
    PageDelivery,
    PageStatus,
    Schedule,
    Team,
)
from pager.paging.queue import pages_enqueue
from pager.schedules.selectors import oncall_now_and_next_many

# Whoever may declare an incident may bring a team into one (responders).
PAGE_TEAM = incident_perms.DECLARE

KEY_PREFIX = "manual"
KEY_RE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
MESSAGE_MAX_CHARS = 500
MANUAL_STEP = 0  # Page.step_position of a page a person asked for: no policy step
NOBODY_ON_CALL = "nobody_on_call"
_ENDED = (IncidentStatus.MITIGATED, IncidentStatus.RESOLVED)


@dataclass(frozen=True)
class _OnCall:
    user_id: int
    username: str
    schedule: str


def oncall_page(
    *,
    actor: User,
    team_slug: str,
    incident_id: int,
    message: str = "",
    key: str | None = None,
) -> list[Page]:
    """Page everyone on call now in the team's schedules for the incident; the pages
    (those of an earlier call with the same `key`, when there was one: nothing more is
    made). PermissionDenied without the responder's permission; NotFound for an unknown
    team or incident; DomainError "nobody_on_call" when the team has nobody to page,
    "invalid_state" for a mitigated or resolved incident, "invalid" for a bad key or
    message."""
    require(actor, PAGE_TEAM, gettext_lazy("page a team"))
    request_key = _key_clean(key)
    message = _message_clean(message)
    team = Team.objects.filter(slug=team_slug).first() if isinstance(team_slug, str) else None
    if team is None:
        raise NotFound(
            gettext_noop("There is no team %(slug)s."), params={"slug": repr(str(team_slug)[:100])}
        )
    prefix = f"{KEY_PREFIX}:{incident_id}:{team.pk}:{request_key}:"
    done = _pages(prefix)
    if done:
        return done  # the same request again
    incident = Incident.objects.filter(pk=incident_id).only("pk", "reopen_count").first()
    if incident is None:
        raise NotFound(gettext_noop("Incident #%(id)s does not exist."), params={"id": incident_id})
    if not Escalation.objects.filter(incident=incident, episode=incident.reopen_count).exists():
        # Its own transactions, before ours: the start commits (and pages whom the
        # policy pages) as the start task would have.
        escalation_start(incident_id=incident.pk)
    with transaction.atomic():
        _make(actor, team, incident.pk, prefix, message)
    return _pages(prefix)


def _key_clean(key: str | None) -> str:
    if key is None or key == "":
        return uuid4().hex
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        raise DomainError(
            gettext_noop(
                "The request key must be 1 to 64 letters, digits or the characters _ . : -"
            ),
            code="invalid",
        )
    return key


def _message_clean(message: str) -> str:
    text = " ".join((message or "").split())  # one line: it goes on the timeline and pages
    if len(text) > MESSAGE_MAX_CHARS:
        raise DomainError(
            gettext_noop("The message is longer than %(limit)s characters."),
            code="invalid",
            params={"limit": MESSAGE_MAX_CHARS},
        )
    return text


def _pages(prefix: str) -> list[Page]:
    return list(
        Page.objects.filter(key__startswith=prefix)
        .select_related("incident", "user", "escalation__team")
        .order_by("pk")
    )


def _make(actor: User, team: Team, incident_id: int, prefix: str, message: str) -> None:
    # NO KEY UPDATE, as the escalation's start: waits for the incident's own moves.
    incident = Incident.objects.select_for_update(no_key=True).get(pk=incident_id)
    if incident.status in _ENDED:
        raise DomainError(
            gettext_noop(
                "Incident #%(id)s is %(state)s: pages are not sent for it. Reopen it first "
                "if it needs people again."
            ),
            params={"id": incident.pk, "state": status_word(incident.status)},
        )
    escalation = (
        Escalation.objects.filter(incident=incident, episode=incident.reopen_count)
        .order_by("-pk")
        .first()
    )
    if escalation is None:  # started meanwhile for another episode: the reopen raced us
        raise DomainError(
            gettext_noop("Incident #%(id)s changed meanwhile; try again."),
            params={"id": incident.pk},
        )
    people = _on_call(team)
    now = timezone.now()
    methods: dict[int, list[ContactMethod]] = {p.user_id: [] for p in people}
    rows = ContactMethod.objects.filter(user_id__in=list(methods), enabled=True)
    for method in rows.order_by("user_id", "position", "pk"):
        methods[method.user_id].append(method)
    surface, by = current_surface(), actor.get_username()
    sent: list[int] = []
    for person in people:
        own = methods[person.user_id]
        page = Page(
            escalation=escalation,
            incident_id=incident.pk,
            user_id=person.user_id,
            key=f"{prefix}u{person.user_id}",
            step_position=MANUAL_STEP,
            loop=escalation.loop,
            repage_round=escalation.repage_round,
            due_at=now,
            created_at=now,
            status=PageStatus.PENDING if own else PageStatus.FAILED,
        )
        deliveries = [
            PageDelivery(method=m, kind=m.kind, position=i) for i, m in enumerate(own, start=1)
        ]
        if not page_insert(page, deliveries):
            continue
        parts: Parts = [
            part(
                "paged_manual",
                user=person.username,
                schedule=person.schedule,
                team=team.name,
                by=by,
            )
        ]
        if message:
            parts.append(part("manual_message", message=message))
        payload: dict[str, object] = {
            "page": page.pk,
            "user": person.user_id,
            "team": team.slug,
            "manual": True,
        }
        _line(incident.pk, escalation, "paged", parts, actor, surface, payload)
        if own:
            sent.append(page.pk)
        else:
            no_contact = [part("no_contact", user=person.username)]
            failed: dict[str, object] = {"page": page.pk, "user": person.user_id}
            _line(incident.pk, escalation, "page_failed", no_contact, actor, surface, failed)
    pages_enqueue(sent)  # when this commits


def _on_call(team: Team) -> list[_OnCall]:
    """Everyone on call now in the team's schedules, once each, in the schedules' order;
    DomainError naming the team when that is nobody."""
    schedules = list(Schedule.objects.filter(team=team).order_by("name"))
    if not schedules:
        raise DomainError(
            gettext_noop(
                "Nobody is on call in team %(team)s: it has no schedule. Page a person "
                "another way, or add a schedule to the team."
            ),
            code=NOBODY_ON_CALL,
            params={"team": team.name},
        )
    oncall = oncall_now_and_next_many(schedules, timezone.now())
    people: dict[int, _OnCall] = {}
    for schedule in schedules:
        for shift in oncall[schedule.pk].now:
            people.setdefault(shift.user_id, _OnCall(shift.user_id, shift.username, schedule.name))
    if not people:
        raise DomainError(
            gettext_noop(
                "Nobody is on call in team %(team)s now (a gap in its schedules): nobody was paged."
            ),
            code=NOBODY_ON_CALL,
            params={"team": team.name},
        )
    return list(people.values())


def _line(
    incident_id: int,
    escalation: Escalation,
    what: str,
    parts: Parts,
    actor: User,
    surface: str,
    payload: dict[str, object],
) -> None:
    """One "page" line in the escalation's shape (its sentence kept as parts), by the
    person who asked, from where they asked."""
    incident_event_record(
        incident_id=incident_id,
        kind=timeline_kinds.PAGE,
        message=join(parts),
        payload={"what": what, "escalation": escalation.pk, **payload},
        actor=actor,
        source=surface,
    )
