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


def change_text(change: dict) -> str:
    """One change the fault made, e.g. `configmaps/llm-serving/vllm-router-config
    dynamic_config.json: routing_logic 'prefixaware' -> 'roundrobin'`."""
    if change.get("kind") == "event":
        return f"{change.get('field', 'event')} of {change.get('object', '?')}"
    before, after = _value(change.get("before")), _value(change.get("after"))
    return f"{_what(change)} {before} -> {after}"


def report_text(entry: dict) -> str:
    what, result = _what(entry), entry.get("result")
    if result == "restored":
        return (
            f"Restored {what} to {_value(entry.get('before'))} "
            f"(the fault had set {_value(entry.get('after'))})"
        )
    if result == "cleared":
        return f"Cleared the fault's condition {what} (back to {_value(entry.get('before'))})"
    if result == "left":
        by = ", ".join(entry.get("changed_by") or []) or "someone"
        return (
            f"Left {what} as it is ({_value(entry.get('now'))}): changed by {by} since the "
            f"fault set {_value(entry.get('after'))}; not put back to "
            f"{_value(entry.get('before'))}"
        )
    if result == "not_undoable":
        return f"Nothing to undo for {change_text(entry)} (it happened; it is not a setting)"
    return f"{what}: {result}"


def injected_text(changes: list[dict]) -> str:
    if not changes:
        return "the fault source reported no change"
    return "changed " + "; ".join(change_text(c) for c in changes)


def drill_run_record_restore(run: DrillRun, answer: dict[str, Any]) -> list[dict]:
    """Record what the clear took back, one step per change, inside the caller's
    transaction (with the run's row locked). Returns the report kept on the run."""
    report = [e for e in answer.get("report") or [] if isinstance(e, dict)]
    fault = run.plan_snapshot.get("fault", "the fault")
    if answer.get("active") is False:
        drill_run_record(
            run, "fault_not_active",
            f"{fault} was no longer active when the drill ended (cleared already, or the "
            "fault source restarted): nothing to take back",
            payload={"answer": answer}, incident_too=True,
        )  # fmt: skip
    if answer.get("note"):
        drill_run_record(run, "clear_note", f"Note: {answer['note']}", incident_too=True)
    for entry in report:
        drill_run_record(
            run, STEPS.get(str(entry.get("result")), "restore_step"), report_text(entry),
            payload={"change": entry}, incident_too=True,
        )  # fmt: skip
    if report:
        run.restored = report
        run.save(update_fields=["restored"])
    return report
