"""The demo's drills: a plan per rehearsed runbook and a finished run per drill story,
each linked to its (drill, demo) incident and scored by the drills app's own scorecard
(drills/scoring.py) from what the incident recorded. Bulk like rows.py: running a drill
through its services would inject faults into the simulator and wait for them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.urls import reverse

from console.texts import Msg
from drills import texts as t
from drills.models import DrillPlan, DrillRun, DrillRunEvent, DrillRunStatus
from drills.scoring import drill_scorecard
from drills.services import plan_snapshot
from drills.timeline_kinds import DRILL
from incidents.demo import DemoContext
from incidents.models import Incident, TimelineEvent
from incidents.texts import event_say
from postmortems.demo.plan import Story


def drills_write(stories: list[Story], incidents: list[Incident], ctx: DemoContext) -> dict:
    plans: dict[str, DrillPlan] = {}
    for story in stories:
        if story.runbook not in plans:
            plans[story.runbook] = DrillPlan(
                # A plan's title is what its author typed: names only, so it reads the
                # same in every language.
                runbook=story.runbook, title=f"{story.runbook} · {story.lws}",
                namespace=story.labels["namespace"], lws=story.lws, fault=story.runbook,
                expected_branch=story.branch, created_by=ctx.admin,
                created_at=story.started - timedelta(days=2), is_demo=True,
            )  # fmt: skip
    DrillPlan.objects.bulk_create(plans.values())
    runs = DrillRun.objects.bulk_create(
        [
            DrillRun(
                plan=plans[s.runbook],
                runbook=s.runbook,
                namespace=s.labels["namespace"],
                lws=s.lws,
                plan_snapshot=plan_snapshot(plans[s.runbook]),
                status=DrillRunStatus.FINISHED,
                started_by=ctx.admin,
                started_at=s.started - timedelta(seconds=20),
                injected_at=s.started,
                ended_at=s.mitigated + timedelta(minutes=1),
                incident=inc,
                is_demo=True,
            )
            for s, inc in zip(stories, incidents, strict=True)
        ]
    )
    events: list[DrillRunEvent] = []
    timeline: list[TimelineEvent] = []
    passed = 0
    for story, run, inc in zip(stories, runs, incidents, strict=True):
        plan = plans[story.runbook]
        reason = t.end_recovered(incident_id=inc.pk, status="mitigated")
        # The scorecard reads the incident's rows, all written by now (rows.py).
        run.scorecard = drill_scorecard(run=run, ended_reason=reason)
        run.passed = run.scorecard["passed"]
        run.outcome = run.scorecard["outcome"]
        passed += bool(run.passed)
        criteria = run.scorecard["criteria"]
        failed = [c for c in criteria if not c["passed"]]
        verdict = t.event_scored(
            outcome=run.outcome, reason=reason, failed=len(failed), total=len(criteria)
        )
        # The steps drills/services.py and drills/execution.py record, with their words.
        steps: list[tuple[Any, str, Msg, bool]] = [
            (run.started_at, "started", t.event_started(
                user=ctx.admin.get_username(), runbook=plan.runbook, fault=plan.fault,
                adapter=plan.adapter, target=plan.target), False),
            (run.injected_at, "injected", t.event_injected(
                fault=plan.fault, adapter=plan.adapter, target=plan.target,
                changes=t.changes_made([])), False),
            (inc.triggered_at, "incident_linked",
             t.event_incident_linked(incident_id=inc.pk, title=inc.title), False),
            (run.ended_at, "cleared", t.event_cleared(fault=plan.fault, reason=reason), True),
            (run.ended_at, "scored", verdict, True),
        ]  # fmt: skip
        url = reverse("drills:drill-run", args=[run.pk])
        for at, kind, said, on_incident in steps:
            events.append(DrillRunEvent(run=run, occurred_at=at, actor=None, kind=kind,
                                        message=said.english,
                                        payload={"msg": said.stored}))  # fmt: skip
            if on_incident:
                line = t.timeline_step(run_id=run.pk, step=said)
                event = TimelineEvent(
                    incident=inc, kind=DRILL, occurred_at=at, source="worker",
                    payload={"drill_run": run.pk, "step": kind, "url": url},
                )  # fmt: skip
                event_say(event, line)
                timeline.append(event)
    DrillRun.objects.bulk_update(runs, ["scorecard", "passed", "outcome"])
    DrillRunEvent.objects.bulk_create(events)
    TimelineEvent.objects.bulk_create(timeline)
    return {"drill plans": len(plans), "drill runs": len(runs), "drills passed": passed}
