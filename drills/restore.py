"""What a drill's fault changed and what its end took back, in words, on the drill's own
history and on its incident's timeline.

A drill restores only what its own fault changed (issue 25: a drill's stop once reset the
whole fleet and scaled a pool a real incident's fix had grown back down, outside the
action audit). The fault source answers the injection with its changes and the clear with
a report, one entry per change: `restored` (the field still held the fault's value and is
back), `cleared` (a condition below the Kubernetes API), `left` (someone changed the field
since: it stays as they left it) or `not_undoable` (an event such as a restart).
"""

from __future__ import annotations

import json
from typing import Any

from console.texts import Msg
from drills import texts as t
from drills.adapters import NO_REPORT_NOTE
from drills.history import drill_run_record
from drills.models import DrillRun

VALUE_MAX = 80
# The step each report entry is recorded as (DrillRunEvent.kind and the timeline's step).
STEPS = {
    "restored": "restored",
    "cleared": "condition_cleared",
    "left": "left_alone",
    "not_undoable": "not_undone",
}


def _value(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= VALUE_MAX else text[: VALUE_MAX - 1] + "…"


def _what(change: dict) -> str:
    obj, field = change.get("object", "?"), change.get("field", "?")
    return field if obj == "fleet" else f"{obj} {field}"


def change_text(change: dict) -> Msg:
    """One change the fault made, e.g. `configmaps/llm-serving/vllm-router-config
    dynamic_config.json: routing_logic 'prefixaware' -> 'roundrobin'`."""
    if change.get("kind") == "event":
        return t.change_event(
            field=str(change.get("field", "event")), obj=str(change.get("object", "?"))
        )
    before, after = _value(change.get("before")), _value(change.get("after"))
    return t.change_set(what=_what(change), before=before, after=after)


def report_text(entry: dict) -> Msg:
    what, result = _what(entry), entry.get("result")
    before, after = _value(entry.get("before")), _value(entry.get("after"))
    if result == "restored":
        return t.restore_restored(what=what, before=before, after=after)
    if result == "cleared":
        return t.restore_cleared(what=what, before=before)
    if result == "left":
        by = ", ".join(entry.get("changed_by") or [])
        now = _value(entry.get("now"))
        return t.restore_left(what=what, now=now, by=by, after=after, before=before)
    if result == "not_undoable":
        return t.restore_not_undoable(change_text(entry))
    return t.restore_other(what=what, result=str(result))


def injected_text(changes: list[dict]) -> Msg:
    return t.changes_made([change_text(c) for c in changes])


def drill_run_record_restore(run: DrillRun, answer: dict[str, Any]) -> list[dict]:
    """Record what the clear took back, one step per change, inside the caller's
    transaction (with the run's row locked). Returns the report kept on the run."""
    report = [e for e in answer.get("report") or [] if isinstance(e, dict)]
    fault = str(run.plan_snapshot.get("fault", "?"))
    if answer.get("active") is False:
        drill_run_record(
            run, "fault_not_active", t.restore_not_active(fault),
            payload={"answer": answer}, incident_too=True,
        )  # fmt: skip
    note = answer.get("note")
    if note:
        words = t.restore_note_no_report() if note == NO_REPORT_NOTE else t.restore_note(str(note))
        drill_run_record(run, "clear_note", words, incident_too=True)
    for entry in report:
        drill_run_record(
            run, STEPS.get(str(entry.get("result")), "restore_step"), report_text(entry),
            payload={"change": entry}, incident_too=True,
        )  # fmt: skip
    if report:
        run.restored = report
        run.save(update_fields=["restored"])
    return report
