"""The demo's 90 days of history (`manage.py seed_demo`, run by `make run` on a fresh
database): resolved incidents across the eight runbooks with their alerts, timelines and
fixes, postmortems (published, in review, a draft), action items (done, open, overdue)
and drills with scorecards, so reports, MTTx charts and the similar-incidents panel have
something to show. Everything is flagged demo (`Incident.is_demo`, `DrillPlan.is_demo`,
`DrillRun.is_demo`; the rest hangs off a demo incident) and leaves with
`seed_demo --reset` (reset.py).

Registered with incidents' demo registry (incidents/demo/) from PostmortemsConfig.ready():
postmortems is the lowest app that may import every app the history touches.

plan.py tells the story (pure data), rows.py and drills.py write it in bulk, documents.py
writes the postmortems and items through their services at historical times (clock.py).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from incidents.demo import DemoContext, DemoPart
from postmortems.demo.documents import postmortems_write
from postmortems.demo.drills import drills_write
from postmortems.demo.plan import drill_stories, history
from postmortems.demo.reset import history_reset
from postmortems.demo.rows import alerts_write, incidents_write, runs_write, timelines_write


def history_seed(ctx: DemoContext) -> dict[str, Any]:
    stories = sorted(history(ctx.now) + drill_stories(ctx.now), key=lambda s: s.started)
    # Oldest first, so ids follow time: "similar" means an earlier (lower) id.
    with transaction.atomic():
        incidents = incidents_write(stories, ctx)
        counts: dict[str, Any] = {"incidents": len(incidents)}
        counts["alerts"] = alerts_write(stories, incidents)
        runs = runs_write(stories, incidents, ctx)
        counts["action runs"] = len(runs)
        counts["timeline events"] = timelines_write(stories, incidents, runs, ctx)
        drilled = [(s, i) for s, i in zip(stories, incidents, strict=True) if s.drill]
        counts.update(drills_write([s for s, _ in drilled], [i for _, i in drilled], ctx))
    # Outside the transaction: drafting asks Prometheus for charts (no call inside one).
    real = [(s, i.pk) for s, i in zip(stories, incidents, strict=True) if not s.drill]
    counts.update(postmortems_write(real, ctx.admin, ctx.commander))
    return counts


PART = DemoPart(key="history", order=10, seed=history_seed, reset=history_reset)
