"""One way to change a run's status: the row, its audit event and the incident's timeline
move together, in the caller's transaction. What they say is stored as parts (console/
texts/): the event's `payload["msg"]`, the timeline entry's, the run's `texts[field]`."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils import timezone

from actions import texts  # noqa: F401  (registry: the ids below)
from actions.kinds import raw
from actions.models import FINAL_STATUSES, ActionRun, ActionRunEvent
from actions.timeline_kinds import ACTION
from actions.transitions import check_move
from console.metrics.series import action_run_ended
from console.surface import current_surface
from console.texts import Msg, msg
from incidents.services import incident_event_record

TIMELINE_MAX = 1_900  # incidents caps timeline messages at 2,000 characters


def run_label(run: ActionRun) -> Msg:
    return msg("actions.run.label", id=run.pk, kind=run.kind, target=run.target)


def run_text_set(run: ActionRun, field: str, said: Msg, limit: int | None = None) -> None:
    """Set a text column to `said` in English (cut to `limit`) and keep its parts in
    `run.texts[field]`; the caller saves `field` and "texts"."""
    english = said.english
    if limit is not None and len(english) > limit:
        english = english[: limit - 1] + "…"
    setattr(run, field, english)
    run.texts = {**(run.texts or {}), field: said.stored}


def _timeline_text(run: ActionRun, message: Msg) -> Msg:
    said = run_label(run) + message
    english = said.english
    if len(english) <= TIMELINE_MAX:
        return said
    # Only a very long quote from Kubernetes gets here: kept as it was said, cut.
    return raw(english[: TIMELINE_MAX - 1] + "…")


def run_record(
    run: ActionRun,
    *,
    message: Msg | str,
    actor: User | None = None,
    to: str | None = None,
    payload: dict | None = None,
    timeline: bool = True,
    fields: tuple[str, ...] = (),
) -> ActionRunEvent:
    """Save the run (status `to` if given, plus `fields`), append the audit event and,
    unless `timeline` is False (retries and other detail), the incident timeline event.
    A status move that transitions.py does not allow is refused (TransitionError)."""
    if isinstance(message, str):
        message = raw(message)  # a caller's own words, shown as they are
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
        message=message.english,
        payload={**payload, "msg": message.stored},
    )
    if timeline:
        incident_event_record(
            incident_id=run.incident_id,
            kind=ACTION,
            message=_timeline_text(run, message),
            payload={**payload, "status": run.status},
            actor=actor,
            source=current_surface() if actor is not None else "worker",
        )
    return event
