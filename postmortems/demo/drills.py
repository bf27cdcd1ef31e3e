"""The demo's drills: a plan per rehearsed runbook and a finished run per drill story,
each linked to its (drill, demo) incident and scored by the drills app's own scorecard
(drills/scoring.py) from what the incident recorded. Bulk like rows.py: running a drill
through its services would inject faults into the simulator and wait for them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.urls import reverse

from drills.models import DrillPlan, DrillRun, DrillRunEvent, DrillRunStatus
from drills.scoring import drill_scorecard
from drills.services import plan_snapshot
from drills.timeline_kinds import DRILL
from incidents.demo import DemoContext
from incidents.models import Incident, TimelineEvent
from postmortems.demo.plan import Story


def drills_write(stories: list[Story], incidents: list[Incident], ctx: DemoContext) -> dict:
    plans: dict[str, DrillPlan] = {}
    for story in stories:
        if story.runbook not in plans:
            plans[story.runbook] = DrillPlan(
                runbook=story.runbook, title=f"Rehearse {story.runbook} on {story.lws}",
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
        reason = f"recovered: incident #{inc.pk} is mitigated"
        # The scorecard reads the incident's rows, all written by now (rows.py).
        run.scorecard = drill_scorecard(run=run, ended_reason=reason)
        run.passed = run.scorecard["passed"]
        passed += bool(run.passed)
        failed = [c["id"] for c in run.scorecard["criteria"] if not c["passed"]]
        verdict = "PASSED" if run.passed else f"FAILED ({', '.join(failed)})"
        where = f"{run.namespace}/{run.lws}"
        steps: list[tuple[Any, str, str, bool]] = [
            (run.started_at, "started", f"Drill started by {ctx.admin.get_username()}", False),
            (run.injected_at, "injected", f"Injected {story.runbook} via simulator on {where}",
             False),
            (inc.triggered_at, "incident_linked", f"Incident #{inc.pk} opened: {inc.title}",
             False),
            (run.ended_at, "cleared", "Fault cleared; baseline restored", True),
            (run.ended_at, "scored", f"Scorecard: {verdict}", True),
        ]  # fmt: skip
        url = reverse("drills:drill-run", args=[run.pk])
        for at, kind, message, on_incident in steps:
            events.append(DrillRunEvent(run=run, occurred_at=at, actor=None, kind=kind,
                                        message=message))  # fmt: skip
            if on_incident:
                timeline.append(TimelineEvent(
                    incident=inc, kind=DRILL, occurred_at=at, source="worker",
                    message=f"Drill run #{run.pk}: {message}",
                    payload={"drill_run": run.pk, "step": kind, "url": url},
                ))  # fmt: skip
    DrillRun.objects.bulk_update(runs, ["scorecard", "passed"])
    DrillRunEvent.objects.bulk_create(events)
    TimelineEvent.objects.bulk_create(timeline)
    return {"drill plans": len(plans), "drill runs": len(runs), "drills passed": passed}
