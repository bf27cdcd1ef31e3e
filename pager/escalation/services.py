"""The escalation engine: one Escalation per incident episode, advanced step by step.

Exactly once under faults. Every advance locks its escalation row (SKIP LOCKED: a second
worker leaves it alone), re-checks that it is still due, runs the steps and moves the row
on in the same transaction as the pages it makes: a worker killed mid-step, or a database
connection cut, rolls all of it back and the next tick runs the step again; a step run
twice (a redelivered task, two beats) finds the pages' unique keys taken and makes
nothing. The pages are handed to the sending queue only after the commit. A step the
engine ran late (beat or broker away) says how late on the timeline.

Nothing is lost to a broker that is down: the tick (beat) also starts what a lost start
task did not (an open, triggered incident without an escalation for its episode) and
each advance first reconciles with the incident's status (an acknowledgement or a
resolution whose task was lost stops the escalation before it pages).

Every service takes `now` (tests pass it; None: the current time).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef
from django.db.models.functions import Coalesce
from django.utils import timezone

from console.texts import Msg
from incidents.models import Incident, IncidentStatus
from pager import timeline_kinds
from pager.escalation.acks import (
    REASON_MITIGATED,
    REASON_RESOLVED,
    STOP_REASONS,
    ack_expire,
    ack_expiry,
    acknowledge,
    acknowledged_meanwhile,
    escalation_on_ack,
    escalation_stop,
    last_acknowledger,
    new_round,
    paging_stop,
    stop,
)
from pager.escalation.steps import skip_reason, step_run, username_of, wait_until
from pager.escalation.suppressed import suppressed_due, suppression_end
from pager.escalation.timeline import Entries, Parts, expiry_parts, hhmm, part
from pager.maintenance.selectors import window_for_incident
from pager.models import Escalation, EscalationPolicy, EscalationState, EscalationStep, Team
from pager.paging.queue import pages_enqueue
from pager.routing import route
from pager.transitions import escalation_move

# The service surface (pager_spec.md): acknowledgement and stop live in acks.py.
__all__ = [
    "REASON_MITIGATED",
    "REASON_NO_POLICY",
    "REASON_RESOLVED",
    "STOP_REASONS",
    "escalation_advance",
    "escalation_on_ack",
    "escalation_start",
    "escalation_stop",
    "escalations_tick",
    "paging_stop",
]

log = logging.getLogger(__name__)
S = EscalationState
IS = IncidentStatus

REASON_NO_POLICY = "no escalation policy"
TICK_BATCH = 200  # escalations one tick advances; the rest wait for the next tick
# The tick starts what a lost start task did not, for incidents opened this recently
# (older ones predate the pager, or were looked at long ago).
MISSED_START_WINDOW = timedelta(hours=1)
# The start task runs a moment after the incident's commit: the tick leaves incidents
# younger than this to it (else it "starts late", and logs so, what is merely queued).
START_GRACE_TICKS = 2


# --- start ---------------------------------------------------------------------------------
def escalation_start(*, incident_id: int, now: datetime | None = None) -> Escalation | None:
    """Begin the escalation of the incident's current episode (or, for alerts firing
    again after mitigation, a new round of it), and run its first step at once: the
    time from the webhook to the first page matters, so the worker that starts it pages
    in the same task. Idempotent: an episode already started is returned as it is."""
    return _start_and_run(incident_id, now)[0]


def _start_and_run(incident_id: int, now: datetime | None) -> tuple[Escalation | None, bool]:
    """The escalation, and whether this call started (or restarted) it."""
    with transaction.atomic():
        escalation, started = _start(incident_id, now or timezone.now())
    if escalation is not None and started and escalation.state == S.ACTIVE:
        # After the commit: the start stands even if this worker dies now (the tick
        # runs the due step).
        escalation_advance(escalation_id=escalation.pk, now=now)
    return escalation, started


def _start(incident_id: int, now: datetime) -> tuple[Escalation | None, bool]:
    # NO KEY UPDATE: serialises with the incident's own moves (an acknowledgement) but
    # not with the timeline and page inserts that only reference the row.
    incident = Incident.objects.select_for_update(no_key=True).filter(pk=incident_id).first()
    if incident is None:
        return None, False
    episode = incident.reopen_count
    existing = (
        Escalation.objects.select_for_update().filter(incident=incident, episode=episode).first()
    )
    if existing is not None:
        return existing, _fired_again(existing, incident, now)
    routed = route(incident)
    escalation = Escalation(
        incident=incident,
        episode=episode,
        team=routed.team,
        policy=routed.policy,
        started_at=now,
    )
    entries = Entries(escalation)
    _decide(escalation, incident, routed.why_parts(), now, entries)
    try:
        with transaction.atomic():
            escalation.save(force_insert=True)
    except IntegrityError:  # the unique episode: started by someone else meanwhile
        return Escalation.objects.filter(incident=incident, episode=episode).first(), False
    entries.record()
    return escalation, True


def _decide(
    escalation: Escalation, incident: Incident, why: Msg, now: datetime, entries: Entries
) -> None:
    """The new escalation's state, and the timeline entry that says it."""

    def stop(reason: str, parts: Parts) -> None:
        escalation_move(escalation, S.STOPPED)
        escalation.stop_reason, escalation.ended_at = reason, now
        entries.escalation_event("not_paged", parts, reason=reason)

    if incident.is_demo:
        # Seeded history: recorded, never paged, and its timeline left as written.
        escalation_move(escalation, S.STOPPED)
        escalation.ended_at = now
        escalation.stop_reason = "demo incident: not paged"
    elif incident.is_drill and not settings.PAGER_PAGE_DRILLS:
        stop("drill incident: not paged", [part("drill")])
    elif escalation.policy is None and not _pager_configured():
        # A console that does not use the pager: recorded, its timeline left alone.
        escalation_move(escalation, S.STOPPED)
        escalation.ended_at = now
        escalation.stop_reason = REASON_NO_POLICY
    elif escalation.policy is None:
        team = escalation.team
        no_policy = part("no_policy_team", why=why, team=team.name) if team else None
        stop(REASON_NO_POLICY, [no_policy or part("no_policy", why=why)])
    elif incident.status in STOP_REASONS:
        stop(STOP_REASONS[incident.status], [part(f"before_{incident.status}")])
    elif incident.status == IS.ACKNOWLEDGED:
        actor_id = last_acknowledger(incident.pk)
        who = username_of(actor_id)
        escalation_move(escalation, S.ACKNOWLEDGED)
        escalation.acknowledged_at = now
        escalation.acknowledged_by_id = actor_id
        escalation.ack_expires_at = ack_expiry(escalation, now)
        before = part("before_ack", user=who) if who else part("before_ack_nobody")
        entries.escalation_event("not_paged", [before])
    elif (window := window_for_incident(incident, now)) is not None:
        escalation_move(escalation, S.SUPPRESSED)
        escalation.maintenance, escalation.ended_at = window, now
        entries.add(
            timeline_kinds.MAINTENANCE,
            "suppressed",
            [part("maintenance", window=window.name)],
            window=window.pk,
        )
    else:
        # Due when the incident opened: a start that ran late (its task lost with the
        # broker, and the tick stepping in) says how late its first pages are.
        opened = incident.reopened_at if escalation.episode else incident.triggered_at
        escalation_move(escalation, S.ACTIVE)
        escalation.next_due_at = min(opened or now, now)
        assert escalation.policy is not None
        policy, team = escalation.policy.name, escalation.team
        started = (
            part("started", policy=policy, team=team.name, why=why)
            if team
            else part("started_no_team", policy=policy, why=why)
        )
        entries.escalation_event("started", [started])


def _pager_configured() -> bool:
    return Team.objects.exists() or EscalationPolicy.objects.exists()


def _fired_again(escalation: Escalation, incident: Incident, now: datetime) -> bool:
    """Alerts firing again after mitigation bring the incident back into this episode:
    triggered, page again from the first step (a new round, so new page keys); still
    acknowledged, page only if the acknowledgement expires. True: it changed."""
    if not (escalation.state == S.STOPPED and escalation.stop_reason == REASON_MITIGATED):
        return False
    if incident.status not in (IS.TRIGGERED, IS.ACKNOWLEDGED) or escalation.policy is None:
        return False
    entries = Entries(escalation)
    escalation.ended_at, escalation.stop_reason = None, ""
    if incident.status == IS.TRIGGERED:
        new_round(escalation, now)
        escalation.acknowledged_at = escalation.acknowledged_by = escalation.ack_expires_at = None
        entries.escalation_event("fired_again", [part("fired_again")])
    else:
        escalation_move(escalation, S.ACKNOWLEDGED)
        escalation.acknowledged_at = escalation.acknowledged_at or now
        escalation.ack_expires_at = ack_expiry(escalation, now)
        parts = [part("fired_again_ack"), *expiry_parts(escalation.ack_expires_at)]
        entries.escalation_event("fired_again", parts)
    escalation.save()
    entries.record()
    return True


# --- advance -------------------------------------------------------------------------------
def escalation_advance(*, escalation_id: int, now: datetime | None = None) -> list[int]:
    """Run the escalation's due steps; the ids of the pages made (queued after commit).
    Nothing when another worker holds the row, or it is not (or no longer) due."""
    return _advance(escalation_id, now)[1]


def _advance(escalation_id: int, now: datetime | None) -> tuple[bool, list[int]]:
    with transaction.atomic():
        escalation = (
            Escalation.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("incident", "policy__team__channel", "team")
            .filter(pk=escalation_id)
            .first()
        )
        at = now or timezone.now()  # after the lock: when the step really runs
        if escalation is None or escalation.state != S.ACTIVE:
            return False, []
        if escalation.next_due_at is None or escalation.next_due_at > at:
            return False, []
        entries = Entries(escalation)
        page_ids: list[int] = []
        incident = escalation.incident
        if incident.status in STOP_REASONS:  # its stop task was lost or is still queued
            stop(escalation, STOP_REASONS[incident.status], at, entries)
        elif (acker := acknowledged_meanwhile(escalation)) is not None:
            acknowledge(escalation, acker[0], at, entries)
        elif escalation.policy is None:
            stop(escalation, "its escalation policy was deleted", at, entries)
        else:
            page_ids = _run_steps(escalation, incident, at, entries)
        escalation.save()
        entries.record()
        pages_enqueue(page_ids)  # when this commits
    return True, page_ids


def _run_steps(
    escalation: Escalation, incident: Incident, now: datetime, entries: Entries
) -> list[int]:
    """From step_index on, until a step waits or the policy ends (then repeat or stop)."""
    policy = escalation.policy
    assert policy is not None
    steps: list[EscalationStep] = list(
        policy.steps.select_related("schedule", "user", "team__channel").order_by("position")
    )
    due = escalation.next_due_at or now
    page_ids: list[int] = []
    # Something happened in this round (a page tried, a wait): repeating a round where
    # nothing could would only repeat its skips.
    progressed = escalation.step_index > 0
    while True:
        if escalation.step_index >= len(steps):
            if progressed and escalation.loop < policy.repeat_times:
                escalation.loop += 1
                escalation.step_index, progressed = 0, False
                repeat = part("repeat", loop=escalation.loop, times=policy.repeat_times)
                entries.escalation_event("repeat", [repeat], loop=escalation.loop)
                continue
            escalation_move(escalation, S.EXHAUSTED)
            escalation.next_due_at, escalation.ended_at = None, now
            last = "exhausted" if progressed else ("nothing_applies" if steps else "no_steps")
            entries.escalation_event("exhausted", [part(last)])
            return page_ids
        step = steps[escalation.step_index]
        escalation.step_index += 1
        skipped = skip_reason(step, incident, now)
        if skipped is not None:
            entries.escalation_event("step_skipped", skipped, step=step.position)
            continue
        ran = step_run(step, escalation, due=due, now=now, entries=entries)
        page_ids += ran.page_ids
        progressed = progressed or ran.attempted
        if (until := wait_until(step, now)) is not None:
            escalation.next_due_at, progressed = until, True
            waiting = part("wait", minutes=step.wait_minutes, time=hhmm(until))
            entries.escalation_event("wait", [waiting], step=step.position, due=until.isoformat())
            return page_ids


# --- the tick (beat) -----------------------------------------------------------------------
def escalations_tick(*, now: datetime | None = None, batch: int = TICK_BATCH) -> int:
    """Beat, every PAGER_TICK_SECONDS: expire acknowledgements, start what a lost start
    task did not, resume what a maintenance window held back once it is over and the
    incident still fires, then advance every due escalation, oldest due first, each in its own
    transaction (a failure stops this tick; the next one carries on). Returns how many
    escalations it started or advanced."""
    at = now or timezone.now()
    expired = Escalation.objects.filter(state=S.ACKNOWLEDGED, ack_expires_at__lte=at)
    for pk in expired.order_by("ack_expires_at", "pk").values_list("pk", flat=True)[:batch]:
        ack_expire(pk, now or timezone.now())
    count = _missed_starts(at, batch, now)
    for pk in suppressed_due(batch):
        count += suppression_end(pk, now or timezone.now())
    due = Escalation.objects.filter(state=S.ACTIVE, next_due_at__lte=at)
    for pk in due.order_by("next_due_at", "pk").values_list("pk", flat=True)[:batch]:
        advanced, _ = _advance(pk, now)
        count += advanced
    return count


def _missed_starts(at: datetime, batch: int, now: datetime | None) -> int:
    """Open triggered incidents whose start never ran (the broker was down when they
    opened), and mitigated ones firing again whose restart never ran."""
    cutoff = at - MISSED_START_WINDOW
    grace = at - timedelta(seconds=START_GRACE_TICKS * float(settings.PAGER_TICK_SECONDS))
    begun = Escalation.objects.filter(incident=OuterRef("pk"), episode=OuterRef("reopen_count"))
    never = (
        Incident.objects.filter(status=IS.TRIGGERED)
        .annotate(opened=Coalesce("reopened_at", "triggered_at"))
        .filter(opened__gte=cutoff, opened__lte=grace)
        .filter(~Exists(begun))
        .order_by("pk")
        .values_list("pk", flat=True)[:batch]
    )
    again = (
        Escalation.objects.filter(
            state=S.STOPPED,
            stop_reason=REASON_MITIGATED,
            episode=F("incident__reopen_count"),
            incident__status=IS.TRIGGERED,
            incident__updated_at__gte=cutoff,
            incident__updated_at__lte=grace,
        )
        .order_by("pk")
        .values_list("incident_id", flat=True)[:batch]
    )
    started = 0
    for incident_id in sorted({*never, *again}):
        _, began = _start_and_run(incident_id, now)
        if began:  # not when another worker's tick or the start task was first
            log.warning("pager: started the escalation of incident %s late", incident_id)
            started += 1
    return started
