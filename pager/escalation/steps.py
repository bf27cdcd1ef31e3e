"""One escalation step: whether it applies to the incident at the moment it runs, whom it
pages, and the Page rows (with their planned deliveries) it makes.

A page's key (incident, episode, re-page round, loop, step, recipient) is unique: a
second worker, a restarted beat or a redelivered task running the same step finds the
row there and makes nothing (the insert runs in a savepoint, so the conflict costs the
caller nothing but that page)."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from incidents.models import Incident
from pager import timeline_kinds
from pager.escalation.timeline import Entries, Parts, clock, hhmm, late_parts, part
from pager.models import (
    ContactKind,
    ContactMethod,
    Escalation,
    EscalationStep,
    Page,
    PageDelivery,
    PageStatus,
    Schedule,
    StepAction,
    Team,
)
from pager.schedules.selectors import oncall_now_and_next_many


def skip_reason(step: EscalationStep, incident: Incident, now: datetime) -> Parts | None:
    """The timeline line when the step does not apply now, else None."""
    if step.severities and incident.severity not in step.severities:
        only = ", ".join(str(s) for s in step.severities)
        return [
            part("skip_severity", step=step.position, severities=only, severity=incident.severity)
        ]
    if step.active_from is None and step.active_until is None:
        return None
    local = now.astimezone(zoneinfo.ZoneInfo(step.time_zone or "UTC"))
    if not within(local.time(), step.active_from, step.active_until):
        start, end = clock(step.active_from, "00:00"), clock(step.active_until, "24:00")
        return [
            part(
                "skip_hours",
                step=step.position,
                start=start,
                end=end,
                zone=step.time_zone,
                now=f"{local:%H:%M}",
            )
        ]
    return None


def within(clock: time, start: time | None, end: time | None) -> bool:
    """[start, end) on a wall clock; an end before the start wraps midnight (22:00-06:00);
    a missing end is midnight, a missing start is 00:00."""
    start = start or time(0, 0)
    if end is None:
        return clock >= start
    if start == end:
        return True  # the whole day
    if start < end:
        return start <= clock < end
    return clock >= start or clock < end


def page_insert(page: Page, deliveries: list[PageDelivery]) -> bool:
    """The page and its deliveries, or nothing when its key exists already (a concurrent
    step, or a person's request made twice). Also used by pager/paging/services/manual.py."""
    try:
        with transaction.atomic():  # a savepoint: the conflict rolls back this page only
            page.save(force_insert=True)
            for delivery in deliveries:
                delivery.page = page
            PageDelivery.objects.bulk_create(deliveries)
    except IntegrityError:
        if not Page.objects.filter(key=page.key).exists():
            raise  # not the key: a real error
        return False
    return True


@dataclass(frozen=True)
class Person:
    user_id: int
    username: str
    schedule: str | None  # on call in this schedule; None: named in the policy


@dataclass
class StepRun:
    """What running one step did: the pages it made, and whether it paged anyone."""

    page_ids: list[int]
    attempted: bool


def step_run(
    step: EscalationStep,
    escalation: Escalation,
    *,
    due: datetime,
    now: datetime,
    entries: Entries,
) -> StepRun:
    """Page whom the step names; every outcome lands in `entries`."""
    page = _PageMaker(escalation, step, due=due, now=now, entries=entries)
    if step.action == StepAction.PAGE_SCHEDULE:
        people = _on_call(step, escalation, now, entries)
        return StepRun(page.people(people), attempted=bool(people))
    if step.action == StepAction.PAGE_USER:
        user = step.user
        if user is None or not user.is_active:
            no_person = [part("no_person", step=step.position)]
            entries.escalation_event("step_no_person", no_person, step=step.position)
            return StepRun([], attempted=False)
        named = Person(user.pk, user.get_username(), None)
        return StepRun(page.people([named]), attempted=True)
    if step.action == StepAction.PAGE_CHANNEL:
        team = step.team or (escalation.policy.team if escalation.policy else None)
        target = team.channel if team is not None else None
        if team is None or target is None or not target.enabled:
            entries.escalation_event("step_no_channel", _no_channel(step, team), step=step.position)
            return StepRun([], attempted=False)
        return StepRun(page.channel(team), attempted=True)
    return StepRun([], attempted=False)  # WAIT: only its wait


def _on_call(
    step: EscalationStep, escalation: Escalation, now: datetime, entries: Entries
) -> list[Person]:
    """Everyone on call now in the step's schedule (else each schedule of the owning
    team), once each, in the schedules' order; a schedule with nobody is a gap."""
    if step.schedule is not None:
        schedules = [step.schedule]
    elif escalation.team_id is not None:
        schedules = list(Schedule.objects.filter(team_id=escalation.team_id).order_by("name"))
    else:
        schedules = []
    if not schedules:
        no_schedule = [part("no_schedule", step=step.position)]
        entries.escalation_event("step_no_schedule", no_schedule, step=step.position)
        return []
    people: dict[int, Person] = {}
    oncall = oncall_now_and_next_many(schedules, now)  # every schedule in one read
    for schedule in schedules:
        shifts = oncall[schedule.pk].now
        if not shifts:
            entries.escalation_event(
                "schedule_gap",
                [part("gap", step=step.position, schedule=schedule.name, time=hhmm(now))],
                step=step.position,
                schedule=schedule.pk,
            )
        for shift in shifts:
            person = Person(shift.user_id, shift.username, schedule.name)
            people.setdefault(shift.user_id, person)
    return list(people.values())


class _PageMaker:
    def __init__(
        self,
        escalation: Escalation,
        step: EscalationStep,
        *,
        due: datetime,
        now: datetime,
        entries: Entries,
    ) -> None:
        self.escalation, self.step, self.due, self.now = escalation, step, due, now
        self.entries = entries
        self.late = max(0.0, (now - due).total_seconds())
        self.tick = float(settings.PAGER_TICK_SECONDS)

    def key(self, recipient: str) -> str:
        e = self.escalation
        return (
            f"{e.incident_id}:{e.episode}:{e.repage_round}:{e.loop}:"
            f"{self.step.position}:{recipient}"
        )

    def _new(self, **fields: object) -> Page:
        e = self.escalation
        return Page(
            escalation=e,
            incident_id=e.incident_id,
            step_position=self.step.position,
            loop=e.loop,
            repage_round=e.repage_round,
            due_at=self.due,
            created_at=self.now,
            late_seconds=self.late,
            **fields,
        )

    def people(self, people: list[Person]) -> list[int]:
        methods: dict[int, list[ContactMethod]] = {p.user_id: [] for p in people}
        if people:
            rows = ContactMethod.objects.filter(user_id__in=list(methods), enabled=True)
            for method in rows.order_by("user_id", "position", "pk"):
                methods[method.user_id].append(method)
        made: list[int] = []
        for person in people:
            own = methods[person.user_id]
            page = self._new(
                user_id=person.user_id,
                key=self.key(f"u{person.user_id}"),
                status=PageStatus.PENDING if own else PageStatus.FAILED,
            )
            deliveries = [
                PageDelivery(method=m, kind=m.kind, position=i) for i, m in enumerate(own, start=1)
            ]
            if not page_insert(page, deliveries):
                continue
            self.entries.add(
                timeline_kinds.PAGE,
                "paged",
                [*self._paged(person), *late_parts(self.late, self.tick)],
                page=page.pk,
                user=person.user_id,
                step=self.step.position,
                late_seconds=round(self.late, 1),
            )
            if own:
                made.append(page.pk)
            else:
                # Nothing to send it through: failed at once, and the person is told why.
                self.entries.add(
                    timeline_kinds.PAGE,
                    "page_failed",
                    [part("no_contact", user=person.username)],
                    page=page.pk,
                    user=person.user_id,
                )
        return made

    def _paged(self, person: Person) -> Parts:
        if person.schedule is None:
            return [part("paged_named", user=person.username, step=self.step.position)]
        return [
            part(
                "paged_oncall",
                user=person.username,
                step=self.step.position,
                schedule=person.schedule,
            )
        ]

    def channel(self, team: Team) -> list[int]:
        target = team.channel
        assert target is not None  # step_run checked it
        page = self._new(channel=target, key=self.key(f"c{target.pk}"))
        delivery = PageDelivery(method=None, kind=ContactKind.WEBHOOK, position=1)
        if not page_insert(page, [delivery]):
            return []
        self.entries.add(
            timeline_kinds.PAGE,
            "paged",
            [
                part("paged_channel", team=team.name, channel=target.name, step=self.step.position),
                *late_parts(self.late, self.tick),
            ],
            page=page.pk,
            channel=target.pk,
            step=self.step.position,
            late_seconds=round(self.late, 1),
        )
        return [page.pk]


def _no_channel(step: EscalationStep, team: Team | None) -> Parts:
    if team is None:
        return [part("no_channel", step=step.position)]
    return [part("no_channel_team", step=step.position, team=team.name)]


def wait_until(step: EscalationStep, now: datetime) -> datetime | None:
    return now + timedelta(minutes=step.wait_minutes) if step.wait_minutes else None


def username_of(user_id: int | None) -> str | None:
    if user_id is None:
        return None
    user = get_user_model().objects.filter(pk=user_id).only("username").first()
    return user.get_username() if user is not None else None
