"""The pager's demo configuration: two teams, who is on call, how they are paged.

- LLM serving (the default team) owns the simulator's namespace; admin and commander
  take weekly turns on Primary (Europe/Berlin, handoff Monday 09:00) with a "Business
  hours" layer above it that puts admin on call Monday to Friday 09:00-18:00 (a layer
  covering the one below), and the other way round on Secondary.
- Its policy (the default one): page Primary, wait 5 min; page Secondary, wait 10 min;
  post to the team's channel when a notification target exists; run it all once more;
  an acknowledgement with no progress for 30 min pages again.
- Platform owns the GPU node pools (gpu-*) and rolls the GPU driver out every Tuesday
  02:00-03:00 Berlin time, a recurring maintenance window.
- admin and commander each get one email contact method: `make run`'s email backend
  prints mail to the console, so a page shows up in the log.

Written only into a pager nobody has configured (no team and no escalation policy):
configuration someone made is never touched or added to. Heartbeats are not seeded:
each Alertmanager replica's appears on its first Watchdog.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.db import transaction

from console.errors import DomainError
from incidents.demo import DemoContext
from notifications.models import Target
from pager.maintenance.services import window_create
from pager.models import (
    ContactKind,
    ContactMethod,
    EscalationPolicy,
    EscalationStep,
    Frequency,
    Ownership,
    Rotation,
    RotationMember,
    Schedule,
    StepAction,
    Team,
)
from pager.paging.services import contact_method_create
from pager.schedules.rotation import wall_clock_stored
from postmortems.demo.plan import DAYS, NAMESPACE

ZONE = "Europe/Berlin"
HANDOFF = time(9, 0)  # Monday, local: the weekly handoff
BUSINESS_HOURS = (time(9, 0), time(18, 0))
WEEKDAYS = [0, 1, 2, 3, 4]  # Monday to Friday
SERVING = "llm-serving"
PLATFORM = "platform"
PRIMARY = "llm-serving-primary"
SECONDARY = "llm-serving-secondary"
POLICY = "LLM serving default"
WINDOW = "Weekly GPU driver rollout"
WINDOW_RULE = "FREQ=WEEKLY;BYDAY=TU"
WINDOW_START = time(2, 0)
TUESDAY = 1


def configured() -> bool:
    """Someone (or an earlier seed) has set the pager up."""
    return Team.objects.exists() or EscalationPolicy.objects.exists()


def config_seed(ctx: DemoContext) -> dict[str, Any]:
    """The demo teams, schedules, policy, contact methods and maintenance window, unless
    the pager is configured already. Counts of what was made (empty: nothing)."""
    if configured():
        return {}
    with transaction.atomic():
        serving, platform = _teams(ctx)
        primary, secondary = _schedules(serving, ctx)
        steps = _policy(serving, primary, secondary)
        methods = _contact_methods(ctx)
        window_create(
            name=WINDOW,
            team_id=platform.pk,
            matchers=None,
            starts_at=(start := next_tuesday(ctx.now)),
            ends_at=start + timedelta(hours=1),
            recurrence=WINDOW_RULE,
            time_zone=ZONE,
            reason="GPU driver rollout, node by node: the gpu-* pools page nobody meanwhile.",
            actor=ctx.admin,
        )
    return {
        "pager teams": 2,
        "pager schedules": 2,
        "pager policy steps": steps,
        "pager contact methods": methods,
        "pager maintenance windows": 1,
    }


def first_handoff(now: datetime) -> datetime:
    """The rotations' first handoff (naive, Berlin wall clock): the Monday 09:00 before
    the oldest demo incident, so every page of the history finds someone on call."""
    local = now.astimezone(ZoneInfo(ZONE)) - timedelta(days=DAYS + 1)
    monday = local.date() - timedelta(days=local.weekday())
    return datetime.combine(monday, HANDOFF)


def next_tuesday(now: datetime) -> datetime:
    """The next Tuesday 02:00 in Berlin after `now` (aware): the window's first occurrence."""
    zone = ZoneInfo(ZONE)
    local = now.astimezone(zone)
    day = local.date() + timedelta(days=(TUESDAY - local.weekday()) % 7)
    start = datetime.combine(day, WINDOW_START, tzinfo=zone)
    return start if start > now else start + timedelta(days=7)


def _teams(ctx: DemoContext) -> tuple[Team, Team]:
    serving = Team.objects.create(slug=SERVING, name="LLM serving", is_default=True)
    serving.members.add(ctx.admin, ctx.commander)
    Ownership.objects.create(team=serving, namespace=NAMESPACE)
    platform = Team.objects.create(slug=PLATFORM, name="Platform")
    # The commander is on both teams: the GPU nodes' owners are a real team too.
    platform.members.add(ctx.commander)
    Ownership.objects.create(team=platform, node_pool="gpu-*")
    return serving, platform


def _rotation(
    schedule: Schedule, name: str, starts_at: datetime, people: list[User], **extra: Any
) -> Rotation:
    rotation = Rotation.objects.create(
        schedule=schedule,
        name=name,
        frequency=Frequency.WEEKLY,
        starts_at=wall_clock_stored(starts_at),
        **extra,
    )
    RotationMember.objects.bulk_create(
        RotationMember(rotation=rotation, user=person, position=i)
        for i, person in enumerate(people, start=1)
    )
    return rotation


def _schedules(team: Team, ctx: DemoContext) -> tuple[Schedule, Schedule]:
    start = first_handoff(ctx.now)
    primary = Schedule.objects.create(team=team, slug=PRIMARY, name="Primary", time_zone=ZONE)
    _rotation(primary, "Weekly", start, [ctx.admin, ctx.commander])
    _rotation(
        primary,
        "Business hours",
        start,
        [ctx.admin],
        priority=1,
        restrict_weekdays=WEEKDAYS,
        restrict_start=BUSINESS_HOURS[0],
        restrict_end=BUSINESS_HOURS[1],
    )
    secondary = Schedule.objects.create(team=team, slug=SECONDARY, name="Secondary", time_zone=ZONE)
    _rotation(secondary, "Weekly", start, [ctx.commander, ctx.admin])
    return primary, secondary


def _policy(team: Team, primary: Schedule, secondary: Schedule) -> int:
    policy = EscalationPolicy.objects.create(
        name=POLICY, team=team, is_default=True, ack_timeout_minutes=30, repeat_times=1
    )
    steps = [
        EscalationStep(
            policy=policy,
            position=1,
            action=StepAction.PAGE_SCHEDULE,
            schedule=primary,
            wait_minutes=5,
        ),
        EscalationStep(
            policy=policy,
            position=2,
            action=StepAction.PAGE_SCHEDULE,
            schedule=secondary,
            wait_minutes=10,
        ),
    ]
    # The team's channel only when there is somewhere to post: a demo step that could
    # only ever say "no channel" would teach the wrong thing.
    channel = Target.objects.filter(enabled=True).order_by("pk").first()
    if channel is not None:
        team.channel = channel
        steps.append(
            EscalationStep(policy=policy, position=3, action=StepAction.PAGE_CHANNEL, team=team)
        )
    EscalationStep.objects.bulk_create(steps)
    team.escalation_policy = policy
    team.save(update_fields=["escalation_policy", "channel"])
    return len(steps)


def _contact_methods(ctx: DemoContext) -> int:
    """One email method each for the people who have none yet."""
    made = 0
    for person in (ctx.admin, ctx.commander):
        if ContactMethod.objects.filter(user=person).exists():
            continue
        try:
            contact_method_create(
                actor=ctx.admin,
                user_id=person.pk,
                kind=ContactKind.EMAIL,
                address=f"{person.get_username()}@example.com",
                label="Work email",
            )
        except DomainError:
            continue  # a username that makes no email address: no method, the page fails
        made += 1
    return made
