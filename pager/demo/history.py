"""Page history for the demo incidents: what the escalation engine would have done for
each of them, so the reports, the pages list and each incident's pager panel have
something to show.

For each demo incident (episode 0), the policy its route gives is walked the way
pager/escalation/services.py runs it: the first step a few seconds after the incident
opened, each wait measured from when its step ran, a repeat of the policy after the last
step, until the incident was acknowledged (or mitigated or resolved). Each page goes to
whoever the schedule had on call at that moment (pager.schedules.selectors.oncall_at),
was sent by the person's first contact method, and is acknowledged at the incident's
own `acknowledged_at`. The escalation ends as the engine leaves it: stopped when the
incident was mitigated (or resolved). Drills are not paged (unless PAGER_PAGE_DRILLS),
as in the engine.

Simplifications, on purpose: re-pages after an acknowledgement expired are not replayed
(the demo timelines show none), and nothing is written to the timelines (append-only,
already written by postmortems/demo/); the history lives in the pager's own tables.
Deterministic: a seeded Random gives the seconds a tick and a mail server take.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction

from incidents.demo import DemoContext
from incidents.models import Incident
from pager.escalation.services import REASON_MITIGATED, REASON_NO_POLICY, REASON_RESOLVED
from pager.escalation.steps import skip_reason
from pager.models import (
    ContactKind,
    ContactMethod,
    DeliveryState,
    Escalation,
    EscalationPolicy,
    EscalationState,
    EscalationStep,
    Page,
    PageDelivery,
    PageStatus,
    Schedule,
    StepAction,
    Team,
)
from pager.routing import route
from pager.schedules.selectors import oncall_at

SEED = 26  # the pager's issue; any constant keeps the history stable
TICK_SECONDS = (2, 9)  # from a step being due to its pages being made (beat, the worker)
SEND_SECONDS = (1, 4)  # from a page being made to the mail server taking it
# The escalation engine's words for a drill it does not page (pager/escalation/services.py).
REASON_DRILL = "drill incident: not paged"


@dataclass(frozen=True)
class Planned:
    """One page the walk made."""

    step: int
    loop: int
    user_id: int | None
    channel_id: int | None
    due_at: datetime
    created_at: datetime


@dataclass
class Walk:
    pages: list[Planned]
    loop: int = 0
    step_index: int = 0


def history_seed(ctx: DemoContext) -> dict[str, Any]:
    """Escalations and pages for the demo incidents that have none yet."""
    rng = random.Random(SEED)  # noqa: S311 (a story, not a secret)
    incidents = list(
        Incident.objects.filter(is_demo=True, triggered_at__isnull=False)
        .exclude(escalations__episode=0)
        .select_related("commander")
        .order_by("triggered_at", "pk")
    )
    methods = _methods()
    steps: dict[int, list[EscalationStep]] = {}
    escalations: list[Escalation] = []
    walks: list[Walk] = []
    for incident in incidents:
        if _ended(incident) is None:
            continue  # still open: the live engine pages it (or says why it does not)
        routed = route(incident)
        escalation = Escalation(
            incident=incident,
            episode=0,
            team=routed.team,
            policy=routed.policy,
            started_at=incident.triggered_at,
        )
        walk = Walk(pages=[])
        if incident.is_drill and not settings.PAGER_PAGE_DRILLS:
            _stopped(escalation, REASON_DRILL, incident.triggered_at)
        elif routed.policy is None:
            _stopped(escalation, REASON_NO_POLICY, incident.triggered_at)
        else:
            policy = routed.policy
            if policy.pk not in steps:
                steps[policy.pk] = _steps(policy)
            walk = _walk(incident, routed.team, policy, steps[policy.pk], rng)
            _finish(escalation, incident, walk)
        escalations.append(escalation)
        walks.append(walk)
    with transaction.atomic():
        Escalation.objects.bulk_create(escalations)
        pages, deliveries = _rows(escalations, walks, methods, rng)
    return {
        "pager escalations": len(escalations),
        "pager pages": pages,
        "pager page deliveries": deliveries,
    }


def _ended(incident: Incident) -> datetime | None:
    """When paging stopped: the first of acknowledged, mitigated, resolved."""
    moments = [incident.acknowledged_at, incident.mitigated_at, incident.resolved_at]
    return min((m for m in moments if m is not None), default=None)


def _stopped(escalation: Escalation, reason: str, at: datetime) -> None:
    escalation.state, escalation.stop_reason, escalation.ended_at = (
        EscalationState.STOPPED,
        reason,
        at,
    )


def _steps(policy: EscalationPolicy) -> list[EscalationStep]:
    return list(
        policy.steps.select_related("schedule", "user", "team__channel").order_by("position")
    )


def _methods() -> dict[int, list[ContactMethod]]:
    """Each person's enabled contact methods, in their order."""
    found: dict[int, list[ContactMethod]] = {}
    for method in ContactMethod.objects.filter(enabled=True).order_by("user_id", "position", "pk"):
        found.setdefault(method.user_id, []).append(method)
    return found


def _tick(rng: random.Random, due: datetime) -> datetime:
    return due + timedelta(seconds=rng.randint(*TICK_SECONDS))


def _walk(
    incident: Incident,
    team: Team | None,
    policy: EscalationPolicy,
    steps: list[EscalationStep],
    rng: random.Random,
) -> Walk:
    """The policy run from the incident's opening until paging stopped (_run_steps in
    pager/escalation/services.py, replayed)."""
    end = _ended(incident)
    due = incident.triggered_at
    if end is None or due is None:
        return Walk(pages=[])  # history_seed walks only incidents that opened and ended
    walk = Walk(pages=[])
    run = _tick(rng, due)
    progressed = False
    while run < end:
        if walk.step_index >= len(steps):
            if progressed and walk.loop < policy.repeat_times:
                walk.loop, walk.step_index, progressed = walk.loop + 1, 0, False
                continue
            break  # reached the last step; the acknowledgement came later
        step = steps[walk.step_index]
        walk.step_index += 1
        if skip_reason(step, incident, run) is not None:
            continue
        users, channel = _recipients(step, team, policy, run)
        for user_id in users:
            walk.pages.append(Planned(step.position, walk.loop, user_id, None, due, run))
        if channel is not None:
            walk.pages.append(Planned(step.position, walk.loop, None, channel, due, run))
        progressed = progressed or bool(users) or channel is not None
        if step.wait_minutes:
            due = run + timedelta(minutes=step.wait_minutes)
            run, progressed = _tick(rng, due), True
    return walk


def _recipients(
    step: EscalationStep, team: Team | None, policy: EscalationPolicy, at: datetime
) -> tuple[list[int], int | None]:
    """(people, channel target) the step pages at `at`."""
    if step.action == StepAction.PAGE_SCHEDULE:
        if step.schedule is not None:
            schedules = [step.schedule]
        elif team is not None:
            schedules = list(Schedule.objects.filter(team=team).order_by("name"))
        else:
            schedules = []
        people: dict[int, None] = {}
        for schedule in schedules:
            for shift in oncall_at(schedule, at):
                people.setdefault(shift.user_id, None)
        return list(people), None
    if step.action == StepAction.PAGE_USER:
        user = step.user
        return ([user.pk] if user is not None and user.is_active else []), None
    if step.action == StepAction.PAGE_CHANNEL:
        owner = step.team or policy.team
        target = owner.channel if owner is not None else None
        return [], target.pk if target is not None and target.enabled else None
    return [], None


def _finish(escalation: Escalation, incident: Incident, walk: Walk) -> None:
    """The state the engine leaves: acknowledged by the commander (the first
    acknowledger takes command), then stopped by the mitigation or the resolution."""
    escalation.loop, escalation.step_index = walk.loop, walk.step_index
    if incident.acknowledged_at is not None:
        escalation.state = EscalationState.ACKNOWLEDGED
        escalation.acknowledged_at = incident.acknowledged_at
        escalation.acknowledged_by_id = incident.commander_id
        # No expiry: a demo incident still acknowledged must never be paged again for
        # real by the tick.
        escalation.ack_expires_at = None
    closings = [
        (at, reason)
        for at, reason in (
            (incident.mitigated_at, REASON_MITIGATED),
            (incident.resolved_at, REASON_RESOLVED),
        )
        if at is not None
    ]
    if closings:
        at, reason = min(closings, key=lambda pair: pair[0])
        _stopped(escalation, reason, at)


def _rows(
    escalations: list[Escalation],
    walks: Iterable[Walk],
    methods: dict[int, list[ContactMethod]],
    rng: random.Random,
) -> tuple[int, int]:
    """The Page and PageDelivery rows of every walk; (pages, deliveries) written."""
    pages: list[Page] = []
    planned_deliveries: list[list[PageDelivery]] = []
    for escalation, walk in zip(escalations, walks, strict=True):
        ack = escalation.incident.acknowledged_at
        for plan in walk.pages:
            page, deliveries = _page(escalation, plan, methods, ack, rng)
            pages.append(page)
            planned_deliveries.append(deliveries)
    Page.objects.bulk_create(pages, batch_size=500)
    rows = []
    for page, deliveries in zip(pages, planned_deliveries, strict=True):
        for delivery in deliveries:
            delivery.page = page
            rows.append(delivery)
    PageDelivery.objects.bulk_create(rows, batch_size=500)
    return len(pages), len(rows)


def _page(
    escalation: Escalation,
    plan: Planned,
    methods: dict[int, list[ContactMethod]],
    ack: datetime | None,
    rng: random.Random,
) -> tuple[Page, list[PageDelivery]]:
    recipient = f"u{plan.user_id}" if plan.user_id is not None else f"c{plan.channel_id}"
    page = Page(
        escalation=escalation,
        incident_id=escalation.incident_id,
        user_id=plan.user_id,
        channel_id=plan.channel_id,
        key=f"{escalation.incident_id}:0:0:{plan.loop}:{plan.step}:{recipient}",
        step_position=plan.step,
        loop=plan.loop,
        repage_round=0,
        due_at=plan.due_at,
        created_at=plan.created_at,
        late_seconds=(plan.created_at - plan.due_at).total_seconds(),
    )
    if plan.user_id is not None:
        own = methods.get(plan.user_id, [])
        deliveries = [
            PageDelivery(method=m, kind=m.kind, position=i, state=DeliveryState.SKIPPED)
            for i, m in enumerate(own, start=1)
        ]
    else:
        deliveries = [PageDelivery(method=None, kind=ContactKind.WEBHOOK, position=1)]
    if not deliveries:
        page.status = PageStatus.FAILED  # nothing to send it through, as the engine does
        return page, deliveries
    sent = plan.created_at + timedelta(seconds=rng.randint(*SEND_SECONDS))
    if ack is not None:
        sent = min(sent, ack)
    first = deliveries[0]  # the first method took it; the rest were not needed
    first.state, first.attempts = DeliveryState.SENT, 1
    first.claimed_at, first.sent_at = plan.created_at, sent
    page.first_sent_at = sent
    if ack is not None and plan.created_at < ack:
        page.status, page.acknowledged_at = PageStatus.ACKNOWLEDGED, ack
    else:
        page.status = PageStatus.DELIVERED
    return page, deliveries
