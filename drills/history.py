"""One call records a drill's step in its own history and, once the drill has an
incident, on that incident's timeline too: as parts (drills/texts.py), in English beside
them, so each reader sees the step in their language."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from console.texts import Msg
from drills.models import DrillRun, DrillRunEvent
from drills.texts import timeline_step
from drills.timeline_kinds import DRILL
from incidents.services import incident_event_record


def drill_run_record(
    run: DrillRun,
    kind: str,
    message: Msg,
    *,
    actor: User | None = None,
    payload=None,
    incident_too=False,
) -> DrillRunEvent:
    """Runs inside the caller's transaction, so the step and the change commit together."""
    payload = dict(payload or {})
    event = DrillRunEvent.objects.create(
        run=run, occurred_at=timezone.now(), actor=actor, kind=kind, message=message.english,
        payload={**payload, "msg": message.stored},
    )  # fmt: skip
    if incident_too and run.incident_id:
        incident_event_record(
            incident_id=run.incident_id, kind=DRILL,
            message=timeline_step(run_id=run.pk, step=message), actor=actor,
            payload={"drill_run": run.pk, "step": kind,
                     "url": reverse("drills:drill-run", args=[run.pk]), **payload},
        )  # fmt: skip
    return event
