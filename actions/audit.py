"""One way to change a run's status: the row, its audit event and the incident's timeline
move together, in the caller's transaction."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils import timezone

from actions.models import FINAL_STATUSES, ActionRun, ActionRunEvent
from actions.timeline_kinds import ACTION
from actions.transitions import check_move
from console.metrics.series import action_run_ended
from console.surface import current_surface
from incidents.services import incident_event_record

TIMELINE_MAX = 1_900  # incidents caps timeline messages at 2,000 characters


def run_label(run: ActionRun) -> str:
    return f"Action #{run.pk} {run.kind} on {run.target}"


def run_record(
    run: ActionRun,
    *,
    message: str,
    actor: User | None = None,
    to: str | None = None,
    payload: dict | None = None,
    timeline: bool = True,
    fields: tuple[str, ...] = (),
) -> ActionRunEvent:
    """Save the run (status `to` if given, plus `fields`), append the audit event and,
    unless `timeline` is False (retries and other detail), the incident timeline event.
    A status move that transitions.py does not allow is refused (TransitionError)."""
    status_from = run.status
    if to is not None:
        check_move(run, to)
        run.status = to
    if to is not None or fields:  # a bare event (e.g. "Requested" after the insert) saves nothing
        update = {*fields, "updated_at"} | ({"status"} if to is not None else set())
        run.save(update_fields=sorted(update))
    if to in FINAL_STATUSES:
        action_run_ended(run.kind, to)  # the console's /metrics
    payload = {"run": run.pk, "kind": run.kind, "target": run.target, **(payload or {})}
    event = ActionRunEvent.objects.create(
        run=run,
        occurred_at=timezone.now(),
        actor=actor,
        status_from=status_from if to is not None else "",
        status_to=run.status if to is not None else "",
        message=message,
        payload=payload,
    )
    if timeline:
        text = f"{run_label(run)}: {message}"
        if len(text) > TIMELINE_MAX:
            text = text[: TIMELINE_MAX - 1] + "…"
        incident_event_record(
            incident_id=run.incident_id,
            kind=ACTION,
            message=text,
            payload={**payload, "status": run.status},
            actor=actor,
            source=current_surface() if actor is not None else "worker",
        )
    return event
