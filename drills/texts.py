"""Every text a drill writes (its history, stop reasons, errors, the scorecard's titles and
evidence, its lines on the incident's timeline), as message ids and parameters
(console/texts/), so each reader sees it in their language.

The builders below are the only way drills words a text; the demo history
(postmortems/demo/drills.py) calls them too, so a seeded run reads like a real one.
Names (runbooks, faults, targets, users, object fields and their values) are parameters
and stay as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.utils.translation import gettext_noop, ngettext_lazy, pgettext_lazy

from console.texts import Msg, at, msg, texts_register

# The refusals of drills/targets.py: one wording for the refusal and the run's error.
NOT_A_TARGET = gettext_noop(
    'leaderworkerset %(target)s is not labelled as a drill target (%(label)s: "true"); '
    "a drill never runs against an unlabelled target."
)
TARGET_UNCHECKED = gettext_noop("Could not check that %(target)s is a drill target: %(error)s")

texts_register(
    {
        # A drill run's own history (DrillRunEvent.message, payload["msg"]).
        "drills.event.started": gettext_noop(
            "%(user)s started the drill of %(runbook)s (%(fault)s via %(adapter)s) on %(target)s"
        ),
        "drills.event.injected": gettext_noop(
            "Injected %(fault)s via %(adapter)s on %(target)s: %(changes)s"
        ),
        "drills.event.start_failed": gettext_noop("The drill did not start: %(reason)s"),
        "drills.event.incident_linked": gettext_noop("Incident #%(id)s opened: %(title)s"),
        "drills.event.clear_failed": gettext_noop("Could not clear the fault yet: %(reason)s"),
        "drills.event.cleared": gettext_noop(
            "Cleared %(fault)s (%(reason)s); only what the fault changed is taken back, "
            "the fleet is not reset"
        ),
        "drills.event.scored_passed": gettext_noop("Scorecard: PASSED"),
        "drills.event.scored_failed": ngettext_lazy(
            "Scorecard: FAILED (%(failed)s of %(count)s criterion)",
            "Scorecard: FAILED (%(failed)s of %(count)s criteria)",
            "count",
        ),
        "drills.event.scored_aborted": gettext_noop(
            "Scorecard: ABORTED (%(reason)s); the criteria are not judged"
        ),
        # On the incident's timeline.
        "drills.timeline.step": gettext_noop("Drill run #%(id)s: %(step)s"),
        "drills.timeline.linked": gettext_noop(
            "This incident is drill run #%(id)s (%(fault)s on %(target)s): left out of "
            "reports and MTTx by default."
        ),
        # What the fault changed.
        "drills.changes.none": gettext_noop("the fault source reported no change"),
        "drills.changes.made": gettext_noop("changed %(changes)s"),
        "drills.change.set": gettext_noop("%(what)s %(before)s -> %(after)s"),
        "drills.change.event": gettext_noop("%(field)s of %(object)s"),
        "drills.list.more": gettext_noop("%(first)s; %(rest)s"),
        # What the drill's end took back (drills/restore.py).
        "drills.restore.restored": gettext_noop(
            "Restored %(what)s to %(before)s (the fault had set %(after)s)"
        ),
        "drills.restore.cleared": gettext_noop(
            "Cleared the fault's condition %(what)s (back to %(before)s)"
        ),
        "drills.restore.left": gettext_noop(
            "Left %(what)s as it is (%(now)s): changed by %(by)s since the fault set "
            "%(after)s; not put back to %(before)s"
        ),
        "drills.restore.left_unknown": gettext_noop(
            "Left %(what)s as it is (%(now)s): changed by someone since the fault set "
            "%(after)s; not put back to %(before)s"
        ),
        "drills.restore.not_undoable": gettext_noop(
            "Nothing to undo for %(change)s (it happened; it is not a setting)"
        ),
        "drills.restore.other": gettext_noop("%(what)s: %(result)s"),
        "drills.restore.not_active": gettext_noop(
            "%(fault)s was no longer active when the drill ended (cleared already, or the "
            "fault source restarted): nothing to take back"
        ),
        "drills.restore.note": gettext_noop("Note: %(note)s"),
        "drills.restore.note_no_report": gettext_noop(
            "Note: this simulator does not report what its clear restored"
        ),
        # Why a drill ended (DrillRun.stop_reason, the scorecard's ended_reason).
        "drills.stop.max_duration": gettext_noop(
            "automatic stop: the drill reached its maximum of %(seconds)s s"
        ),
        "drills.stop.real_sev1_opened": gettext_noop(
            "automatic stop: a real SEV1 incident #%(id)s opened (%(title)s)"
        ),
        "drills.stop.real_sev1_reopened": gettext_noop(
            "automatic stop: a real SEV1 incident #%(id)s reopened (%(title)s)"
        ),
        "drills.stop.real_sev1_fired_again": gettext_noop(
            "automatic stop: a real SEV1 incident #%(id)s fired again (%(title)s)"
        ),
        "drills.stop.by": gettext_noop("stopped by %(user)s"),
        "drills.stop.by_with_reason": gettext_noop("stopped by %(user)s: %(reason)s"),
        "drills.stop.stopped": pgettext_lazy("a drill's end", "stopped"),
        "drills.end.recovered_mitigated": gettext_noop("recovered: incident #%(id)s is mitigated"),
        "drills.end.recovered_resolved": gettext_noop("recovered: incident #%(id)s is resolved"),
        # A text stored before it had an id, or raw text from elsewhere, as written.
        "drills.text.as_written": gettext_noop("%(text)s"),
        # Why the fault source refused (FaultError; DrillRun.error).
        "drills.error.url": gettext_noop("the simulator URL must be http(s)://..., got %(url)s"),
        "drills.error.no_answer": gettext_noop(
            "the fleet simulator at %(url)s did not answer (%(reason)s)"
        ),
        "drills.error.refused": gettext_noop(
            "the simulator refused %(method)s %(path)s (%(status)s): %(detail)s"
        ),
        "drills.error.no_fault": gettext_noop(
            "the simulator has no fault %(fault)s; it has %(faults)s"
        ),
        "drills.error.wrong_target": gettext_noop(
            "the simulator's %(fault)s scenario acts on %(expected)s, not on %(target)s"
        ),
        "drills.error.no_adapter": gettext_noop(
            "there is no fault adapter %(name)s; known: %(names)s"
        ),
        # A drill that did not start because its target was refused (drills/targets.py).
        "drills.error.not_a_target": NOT_A_TARGET,
        "drills.error.target_unchecked": TARGET_UNCHECKED,
        # The scorecard (drills/scoring.py): criteria, evidence, links.
        "drills.criterion.detected": gettext_noop(
            "An alert opened the incident within %(seconds)s s"
        ),
        "drills.criterion.acknowledged": gettext_noop("Acknowledged within %(seconds)s s"),
        "drills.criterion.runbook": gettext_noop("The incident carries runbook %(runbook)s"),
        "drills.criterion.branch": gettext_noop("Diagnosis confirmed on branch %(branch)s"),
        "drills.criterion.any_branch": gettext_noop("(any of the runbook)"),
        "drills.criterion.fix_applied": gettext_noop("A recommended fix ran and succeeded"),
        "drills.criterion.recovered": gettext_noop(
            "Recovered (alert resolved) within %(seconds)s s"
        ),
        "drills.criterion.no_undo": gettext_noop("No action needed undoing"),
        "drills.evidence.within": gettext_noop("%(took)s s, within the agreed %(limit)s s"),
        "drills.evidence.over": gettext_noop("%(took)s s, over the agreed %(limit)s s"),
        "drills.evidence.no_incident": gettext_noop("no incident was opened"),
        "drills.evidence.not_acknowledged": gettext_noop("not acknowledged"),
        "drills.evidence.not_recovered": gettext_noop(
            "the alert did not resolve while the drill ran"
        ),
        "drills.evidence.runbook": gettext_noop("runbook %(runbook)s"),
        "drills.evidence.runbook_none": gettext_noop("runbook (none)"),
        "drills.evidence.confirmed": gettext_noop("confirmed %(runbook)s/%(branch)s at %(at)s"),
        "drills.evidence.no_diagnosis": gettext_noop("no diagnosis was confirmed on the incident"),
        "drills.evidence.fix_succeeded": gettext_noop("%(kind)s succeeded at %(at)s"),
        "drills.evidence.no_fix": gettext_noop("no succeeded run of %(kinds)s"),
        "drills.evidence.no_fix_any": gettext_noop("no succeeded run of a recommended action"),
        "drills.evidence.undone": ngettext_lazy(
            "%(count)s run was undone", "%(count)s runs were undone", "count"
        ),
        "drills.evidence.none_undone": ngettext_lazy(
            "%(count)s run, none undone", "%(count)s runs, none undone", "count"
        ),
        "drills.link.incident": gettext_noop("incident #%(id)s"),
        "drills.link.action_run": gettext_noop("action run #%(id)s (%(kind)s)"),
    }
)


def from_stored(stored: Any, english: str = "") -> Msg:
    """A text read back from a row: its parts, or the English it was stored as (a row
    written before texts had ids)."""
    if isinstance(stored, list) and stored:
        return Msg(tuple((key, dict(params or {})) for key, params in stored))
    return msg("drills.text.as_written", text=english)


def as_written(text: str) -> Msg:
    """Text that is not the console's to word (what someone typed, raw answers)."""
    return msg("drills.text.as_written", text=text)


def listed(items: Sequence[Msg]) -> Msg:
    """`a; b; c`, with the separator of the reader's language."""
    if len(items) == 1:
        return items[0]
    return msg("drills.list.more", first=items[0], rest=listed(items[1:]))


def moment(value: datetime | None) -> Any:
    return at(value) if value is not None else "—"


# --- a drill run's history ---------------------------------------------------------------
def event_started(*, user: str, runbook: str, fault: str, adapter: str, target: str) -> Msg:
    return msg(
        "drills.event.started", user=user, runbook=runbook, fault=fault, adapter=adapter,
        target=target,
    )  # fmt: skip


def event_injected(*, fault: str, adapter: str, target: str, changes: Msg) -> Msg:
    """`changes`: `changes_made(...)` (what the fault source answered)."""
    return msg(
        "drills.event.injected", fault=fault, adapter=adapter, target=target, changes=changes
    )


def event_start_failed(reason: Msg) -> Msg:
    return msg("drills.event.start_failed", reason=reason)


def event_incident_linked(*, incident_id: int, title: str) -> Msg:
    return msg("drills.event.incident_linked", id=incident_id, title=title)


def event_clear_failed(reason: Msg) -> Msg:
    return msg("drills.event.clear_failed", reason=reason)


def event_cleared(*, fault: str, reason: Msg) -> Msg:
    return msg("drills.event.cleared", fault=fault, reason=reason)


def event_scored(
    *, outcome: str, reason: Msg | None = None, failed: int = 0, total: int = 0
) -> Msg:
    """`outcome`: passed, failed (`failed` of `total` criteria) or aborted (`reason`)."""
    if outcome == "aborted":
        return msg("drills.event.scored_aborted", reason=reason or stop_stopped())
    if outcome == "passed":
        return msg("drills.event.scored_passed")
    return msg("drills.event.scored_failed", failed=failed, count=total)


def timeline_step(*, run_id: int, step: Msg) -> Msg:
    """A drill's step as its incident's timeline says it."""
    return msg("drills.timeline.step", id=run_id, step=step)


def timeline_linked(*, run_id: int, fault: str, target: str) -> Msg:
    return msg("drills.timeline.linked", id=run_id, fault=fault, target=target)


# --- what the fault changed and what the end took back -------------------------------------
def change_set(*, what: str, before: str, after: str) -> Msg:
    return msg("drills.change.set", what=what, before=before, after=after)


def change_event(*, field: str, obj: str) -> Msg:
    return msg("drills.change.event", field=field, object=obj)


def changes_made(changes: Sequence[Msg]) -> Msg:
    if not changes:
        return msg("drills.changes.none")
    return msg("drills.changes.made", changes=listed(changes))


def restore_restored(*, what: str, before: str, after: str) -> Msg:
    return msg("drills.restore.restored", what=what, before=before, after=after)


def restore_cleared(*, what: str, before: str) -> Msg:
    return msg("drills.restore.cleared", what=what, before=before)


def restore_left(*, what: str, now: str, by: str, after: str, before: str) -> Msg:
    key = "drills.restore.left" if by else "drills.restore.left_unknown"
    params = {"what": what, "now": now, "after": after, "before": before}
    return msg(key, **params, **({"by": by} if by else {}))


def restore_not_undoable(change: Msg) -> Msg:
    return msg("drills.restore.not_undoable", change=change)


def restore_other(*, what: str, result: str) -> Msg:
    return msg("drills.restore.other", what=what, result=result)


def restore_not_active(fault: str) -> Msg:
    return msg("drills.restore.not_active", fault=fault)


def restore_note(note: str) -> Msg:
    return msg("drills.restore.note", note=note)


def restore_note_no_report() -> Msg:
    return msg("drills.restore.note_no_report")


# --- why a drill ended ---------------------------------------------------------------------
def stop_max_duration(seconds: int) -> Msg:
    return msg("drills.stop.max_duration", seconds=seconds)


def stop_real_sev1(*, incident_id: int, how: str, title: str) -> Msg:
    """`how`: opened, reopened or fired again (drills.selectors.real_sev1_since)."""
    key = {"reopened": "real_sev1_reopened", "fired again": "real_sev1_fired_again"}
    return msg(f"drills.stop.{key.get(how, 'real_sev1_opened')}", id=incident_id, title=title)


def is_real_sev1_stop(reason: Msg) -> bool:
    return any(key.startswith("drills.stop.real_sev1_") for key, _params in reason.parts)


def stop_by(*, user: str, reason: str = "") -> Msg:
    if reason:
        return msg("drills.stop.by_with_reason", user=user, reason=reason)
    return msg("drills.stop.by", user=user)


def stop_stopped() -> Msg:
    return msg("drills.stop.stopped")


def end_recovered(*, incident_id: int, status: str) -> Msg:
    """`status`: the incident's, mitigated or resolved."""
    key = "recovered_resolved" if status == "resolved" else "recovered_mitigated"
    return msg(f"drills.end.{key}", id=incident_id)


def row_text_set(row: Any, field: str, text: Msg, *, limit: int | None = None) -> None:
    """Write `text` into a run's `field` (English, cut to the column) and its parts into
    `texts[field]`; the caller saves both ("texts" in update_fields)."""
    english = text.english
    setattr(row, field, english[:limit] if limit else english)
    row.texts = {**(row.texts or {}), field: text.stored}


def row_text(row: Any, field: str) -> Msg:
    """A run's `field` as a Msg: its parts, or the English stored before it had any."""
    return from_stored((row.texts or {}).get(field), getattr(row, field, "") or "")
