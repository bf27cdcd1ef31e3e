"""The guard's judgement: given the readings of one check, say for each runbook signal
whether the change caused a regression. Pure (no Prometheus, no database): the readings
are gathered by actions/guard/evidence.py, the writes are in actions/guard/services.py.

Judge what the change caused, not the outage around it (as Argo Rollouts' analysis and
Flagger's canary analysis do):
- readings taken while the change settles (`settle_seconds`) are shown, never counted;
- a change to some pods (the kind's `guard_split`: new groups, a restarted group, a
  roll-out's rolled groups) is judged on those pods against the unchanged ones *at the
  same time*; gateway-wide signals (no `pod` label) are then context, not evidence;
- a fleet-wide change is judged by its trend: past the threshold against the value just
  before the change in each of `confirm` checks in a row, and not improving across them;
- a signal whose alert already fired in an open incident before the change is excused.
A breach counts after `confirm` checks in a row. Without a value a signal is "unknown",
and unknown never undoes anything.
"""

from __future__ import annotations

import math
import re
from typing import Any

from actions.guard import wording
from actions.guard.wording import (
    as_msg,
    num,
    shown_msg,
    threshold_msg,
    trail,
    with_message,
)
from console.texts import Msg, msg, render
from runbooks.placeholders import fill_promql, missing
from runbooks.schema import COMPARATORS, Guard, GuardSignal
from runbooks.units import unit_msg

OK, BREACH, UNKNOWN = "ok", "breach", "unknown"
# Shown, never counted: settling, gateway-wide context of a split change, excused by an
# alert that fired before the change, a trend that is past the threshold but recovering.
SETTLING, CONTEXT, EXCUSED, IMPROVING = "settling", "context", "excused", "improving"
# A fleet-wide signal that went bad only after it had been healthy since settling.
LATE = "late"
# A fleet-wide latency rise that came with its demand rising (judge.step).
EXPLAINED = "explained"
# A fleet-wide breach while another incident's alert on the signal began after the change.
COINCIDES = "coincides"
# States of a breach the guard does not count and leaves to a person (the window ends
# unknown, with the reason).
LEFT_TO_A_PERSON = (LATE, EXPLAINED, COINCIDES)
# Demand this many times its value before the change explains a latency rise: latency
# follows load, so the change is not what made it slower (Argo Rollouts and Flagger
# compare a canary with its baseline under the same traffic for the same reason).
LOAD_EXPLAINS = 1.3
# Healthy checks after settling after which a fleet-wide regression is no longer
# attributed to the change: a config, limit or replica change acts at once, so a
# regression that starts minutes later, after a healthy stretch, has another cause
# (the next failure of a live outage) and is for a person to judge.
HEALTHY_BEFORE_LATE = 2
# How a reading was taken (evidence.py): the changed pods against the others, the whole
# target against the value before the change, or a gateway-wide value shown as context.
SPLIT, TREND = "split", "trend"
# The built-in signal of a split change: restarts of the changed groups (guard/pods.py).
PODS = wording.PODS


def signal_specs(guard: Guard, labels: dict[str, Any]) -> list[dict]:
    """What a watch stores per signal: the threshold, the filled query, and room for the
    baseline, the latest readings and the state."""
    return [_spec(s, labels) for s in guard.signals]


def _spec(s: GuardSignal, labels: dict[str, Any]) -> dict:
    needs = missing(s.promql, labels)
    return {
        "id": s.id,
        "title": s.title,
        "type": s.type,
        "unit": s.unit,
        "promql": s.promql if needs else fill_promql(s.promql, labels),
        "needs": needs,
        "slo": s.slo,
        "max_burn": s.max_burn,
        "max_ratio": s.max_ratio,
        "min_value": s.min_value,
        "comparator": s.comparator,
        "threshold": s.threshold,
        "scope": s.scope,
        "alerts": list(s.alerts),
        "load": (s.load if needs else fill_promql(s.load, labels)) if s.load else "",
        **not_evaluated(),
    }


def not_evaluated() -> dict[str, Any]:
    """A signal's readings and state before its first check (every kind of signal)."""
    return with_message(
        {
            "baseline": None,
            "value": None,
            "changed": None,
            "unchanged": None,
            "mode": "",
            "readings": [],
            "streak": 0,
            "counts": False,
            "state": UNKNOWN,
        },
        msg("guard.signal.not_evaluated"),
    )


def threshold_text(spec: dict) -> str:
    """The threshold in English words (the API's `threshold`; threshold_msg has its parts)."""
    return threshold_msg(spec).english


def threshold_shown(spec: dict) -> str:
    """The threshold in the viewer's language, for the card."""
    return str(threshold_msg(spec))


def guard_signal_rows(watch) -> list[dict]:
    """A watch's signals for the card's table, worded in the viewer's language: the
    threshold, the state's why (`message`), and a built-in signal's title (a runbook's
    comes from its catalogue)."""
    return [
        {
            **s,
            "threshold": threshold_shown(s),
            "title": str(wording.title(s)),
            "message": render(s.get("message_msg"), fallback=s.get("message") or ""),
        }
        for s in watch.signals
    ]


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def _bad(spec: dict, value: float) -> bool:
    if spec["type"] == PODS:
        return value > 0
    if spec["type"] == "availability":
        return value / (1 - spec["slo"]) > spec["max_burn"]
    return COMPARATORS[spec["comparator"]](value, spec["threshold"])


def higher_is_worse(spec: dict) -> bool:
    return spec["type"] != "quality" or spec["comparator"] in (">", ">=")


def judge(spec: dict, value: float | None, baseline: float | None) -> tuple[str, Msg]:
    """One reading of a fleet-wide change against the value just before it: (state,
    message), ok, breach or unknown. Availability and quality breach when past the
    threshold now and not before; latency when `max_ratio` x the value before."""
    title, unit = wording.title(spec), unit_msg(spec["unit"])
    if value is None or math.isnan(value):
        return UNKNOWN, msg("guard.signal.no_data", title=title)
    if spec["type"] == "latency":
        if baseline is None or math.isnan(baseline) or baseline <= 0:
            return UNKNOWN, msg("guard.signal.no_baseline", title=title)
        limit = max(baseline * spec["max_ratio"], spec["min_value"])
        if value > limit:
            return BREACH, msg(
                "guard.signal.latency_crossed",
                title=title,
                value=num(value),
                unit=unit,
                limit=num(limit),
                ratio=f"{spec['max_ratio']:g}",
                baseline=num(baseline),
            )
        return OK, msg(
            "guard.signal.latency_ok", title=title, value=num(value), unit=unit, limit=num(limit)
        )
    before = None if baseline is None or math.isnan(baseline) else baseline
    now = shown_msg(spec, value)
    if not _bad(spec, value):
        return OK, msg("guard.signal.ok", title=title, now=now)
    if before is not None and _bad(spec, before):
        # Past the threshold before the change too: not this change's doing.
        return OK, msg(
            "guard.signal.already_past", title=title, now=now, threshold=threshold_msg(spec)
        )
    if before is None and spec["type"] == "quality":
        # A quality gate past its threshold with nothing to compare: most likely the outage
        # the change is fixing, so never an undo. (An error ratio with no data before the
        # change means no errors, so availability still breaches.)
        return UNKNOWN, msg("guard.signal.quality_no_baseline", title=title, now=now)
    words = {"title": title, "now": now, "threshold": threshold_msg(spec)}
    if before is not None:
        return BREACH, msg("guard.signal.crossed_was", before=num(before), **words)
    return BREACH, msg("guard.signal.crossed", **words)


def judge_split(
    spec: dict, changed: float | None, unchanged: float | None, what: Any, others: Any
) -> tuple[str, Msg]:
    """The changed pods against the unchanged ones at the same instant (canary against
    baseline): a breach only when the changed part is worse by the signal's own ratio
    (latency) or is past the threshold while the others are not. `what`/`others`: the
    split's phrases (words or a Msg)."""
    title, unit = wording.title(spec), unit_msg(spec["unit"])
    if _missing(changed):
        return UNKNOWN, msg("guard.split.no_data_changed", title=title, what=what)
    if _missing(unchanged):
        return UNKNOWN, msg("guard.split.no_data_others", title=title, what=what, others=others)
    assert changed is not None
    assert unchanged is not None
    both = msg(
        "guard.split.both",
        what=what,
        changed=shown_msg(spec, changed),
        others=others,
        unchanged=shown_msg(spec, unchanged),
    )
    if spec["type"] == "latency":
        limit = max(unchanged * spec["max_ratio"], spec["min_value"])
        if changed > limit:
            return BREACH, msg(
                "guard.split.latency_breach",
                title=title,
                both=both,
                limit=num(limit),
                unit=unit,
                ratio=f"{spec['max_ratio']:g}",
                others=others,
            )
        return OK, msg(
            "guard.split.latency_ok", title=title, both=both, limit=num(limit), unit=unit
        )
    if spec["type"] == PODS:
        # A share of groups: the changed ones restart, and more of them than of the rest
        # (a crash loop in the whole pool is the outage, not this change).
        if changed > 0 and changed > unchanged:
            return BREACH, msg(
                "guard.split.pods_breach", title=title, both=both, what=what, others=others
            )
        return OK, msg("guard.split.ok", title=title, both=both)
    if _bad(spec, changed) and not _bad(spec, unchanged):
        return BREACH, msg(
            "guard.split.only_changed",
            title=title,
            both=both,
            what=what,
            threshold=threshold_msg(spec),
        )
    return OK, msg("guard.split.ok", title=title, both=both)


_RANGE = re.compile(r"\[(\d+)([smh])\]")
_UNIT = {"s": 1, "m": 60, "h": 3600}


def lookback_seconds(promql: str) -> int:
    """The longest range selector of a query ([1m] -> 60): how long after a change its
    value still mixes in readings from before."""
    return max((int(n) * _UNIT[u] for n, u in _RANGE.findall(promql)), default=0)


def load_rise(spec: dict, reading: dict) -> float | None:
    """How many times the latency signal's demand is now against before the change (None
    without a `load` query or its two readings)."""
    before, now = reading.get("load_before"), reading.get("load_now")
    if spec.get("type") != "latency" or before is None or now is None:
        return None
    if _missing(before) or _missing(now) or before <= 0:
        return None
    return float(now) / float(before)


def improving(spec: dict, readings: list[float]) -> bool:
    """A trend that is getting better across the streak: the latest reading is better
    than the first (a queue draining, a cache warming) is not a regression yet."""
    if len(readings) < 2:
        return False
    first, last = readings[0], readings[-1]
    return last < first if higher_is_worse(spec) else last > first


def step(spec: dict, reading: dict, confirm: int) -> dict:
    """One check of one signal: the stored spec updated with `reading` (from
    evidence.read_signal: mode, value, baseline, changed, unchanged, error, excuse,
    what/others, settles) and its state, streak and whether its breach counts. The state's
    why is stored in English (`message`) and as parts (`message_msg`)."""
    spec = dict(spec)
    mode = reading.get("mode", TREND)
    if spec.get("mode") != mode:
        spec.update(streak=0, readings=[])  # a split that became fleet-wide starts over
    for key in ("value", "baseline", "changed", "unchanged", "load_before", "load_now"):
        if key in reading:
            spec[key] = reading[key]
    spec.update(mode=mode, counts=False)
    state, message = _state(spec, reading, mode)
    if state != BREACH:
        healthy = int(spec.get("healthy") or 0)
        if state == OK and mode == TREND and reading.get("reacted", True):
            healthy += 1
        spec.update(state=state, streak=0, readings=[], healthy=healthy)
        return with_message(spec, message)
    if mode == TREND and reading.get("coincides"):
        spec.update(state=COINCIDES, streak=0, readings=[])
        why = msg("guard.step.coincides", message=message, coincides=reading["coincides"])
        return with_message(spec, why)
    load = load_rise(spec, reading)
    if mode == TREND and load is not None and load >= LOAD_EXPLAINS:
        spec.update(state=EXPLAINED, streak=0, readings=[])
        why = msg(
            "guard.step.explained",
            message=message,
            rise=f"{load:.2g}",
            before=num(reading["load_before"]),
            now=num(reading["load_now"]),
        )
        return with_message(spec, why)
    if mode == TREND and int(spec.get("healthy") or 0) >= HEALTHY_BEFORE_LATE:
        spec.update(state=LATE, streak=0, readings=[])
        why = msg("guard.step.late", message=message, healthy=int(spec["healthy"]))
        return with_message(spec, why)
    primary = spec["changed"] if mode == SPLIT else spec["value"]
    streak = int(spec.get("streak") or 0) + 1
    readings = [*list(spec.get("readings") or []), primary][-max(confirm, 2) :]
    spec.update(streak=streak, readings=readings)
    if streak < confirm:
        message = msg("guard.step.pending", message=message, streak=streak, confirm=confirm)
    elif mode == TREND and improving(spec, readings):
        state = IMPROVING
        message = msg("guard.step.improving", message=message, trail=trail(readings, " → "))
    else:
        spec["counts"] = True
        if mode == SPLIT:
            message = msg("guard.step.counts_split", message=message, streak=streak)
        else:
            message = msg(
                "guard.step.counts_trend",
                message=message,
                streak=streak,
                trail=trail(readings[-confirm:], ", "),
            )
    spec.update(state=state)
    return with_message(spec, message)


def _state(spec: dict, reading: dict, mode: str) -> tuple[str, Msg]:
    title = wording.title(spec)
    if spec["needs"]:
        return UNKNOWN, msg("guard.signal.needs_label", labels=", ".join(spec["needs"]))
    if reading.get("error"):
        return UNKNOWN, as_msg(reading["error"])
    value = spec["changed"] if mode == SPLIT else spec["value"]
    now = msg("guard.no_data") if _missing(value) else shown_msg(spec, value)
    if reading.get("settling"):
        return SETTLING, msg("guard.signal.settling", title=title, now=now)
    if mode == CONTEXT:
        what = reading.get("what") or msg("guard.what.change")
        return CONTEXT, msg("guard.signal.context", title=title, now=now, what=what)
    if mode == SPLIT:
        what = reading.get("what") or msg("guard.what.changed_pods")
        others = reading.get("others") or msg("guard.what.others")
        state, message = judge_split(spec, spec["changed"], spec["unchanged"], what, others)
        detail = reading.get("detail")
        if detail and state != UNKNOWN:
            return state, msg("guard.signal.detail", message=message, detail=detail)
        return state, message
    if reading.get("excuse"):
        return EXCUSED, msg("guard.signal.excused", title=title, now=now, excuse=reading["excuse"])
    return judge(spec, spec["value"], spec["baseline"])


def verdict(specs: list[dict]) -> str:
    """The verdict of one check: breach when a signal's breach counts; unknown when a
    signal could not be judged (an optional one aside: the built-in pod signal without
    kube-state-metrics); ok otherwise (settling, context and excused included)."""
    if any(s.get("counts") for s in specs):
        return BREACH
    unknown = any(s["state"] == UNKNOWN and not s.get("optional") for s in specs)
    return UNKNOWN if unknown else OK


def evidence_text(spec: dict) -> dict[str, Any]:
    """What a breach's timeline entry and the API keep of a signal: its readings."""
    keys = ("id", "mode", "value", "baseline", "changed", "unchanged", "readings", "streak")
    return {k: spec.get(k) for k in keys}
