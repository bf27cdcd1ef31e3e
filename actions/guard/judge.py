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

from django.utils.translation import gettext as _

from runbooks.placeholders import fill_promql, missing
from runbooks.schema import COMPARATORS, Guard, GuardSignal

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
PODS = "pods"


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
    return {
        "baseline": None,
        "value": None,
        "changed": None,
        "unchanged": None,
        "mode": "",
        "readings": [],
        "streak": 0,
        "counts": False,
        "state": UNKNOWN,
        "message": "not evaluated yet",
    }


def threshold_text(spec: dict) -> str:
    """The threshold in words, for the card and the timeline."""
    if spec["type"] == PODS:
        return "changed groups restarting, more of them than of the unchanged groups"
    if spec["type"] == "availability":
        return f"burn rate above {spec['max_burn']:g}x of a {spec['slo']:.2%} SLO"
    if spec["type"] == "latency":
        floor = f" and above {spec['min_value']:g} {spec['unit']}" if spec["min_value"] else ""
        return f"above {spec['max_ratio']:g}x the value before the change{floor}"
    return f"{spec['comparator']} {spec['threshold']:g}"


def threshold_shown(spec: dict) -> str:
    """threshold_text in the viewer's language, for the card (the timeline and the API
    keep the English words)."""
    if spec["type"] == PODS:
        return _("changed groups restarting, more of them than of the unchanged groups")
    if spec["type"] == "availability":
        return _("burn rate above %(burn)sx of a %(slo)s SLO") % {
            "burn": f"{spec['max_burn']:g}",
            "slo": f"{spec['slo']:.2%}",
        }
    if spec["type"] == "latency":
        values = {
            "ratio": f"{spec['max_ratio']:g}",
            "floor": f"{spec['min_value']:g}" if spec["min_value"] else "",
            "unit": spec["unit"],
        }
        if spec["min_value"]:
            return (
                _("above %(ratio)sx the value before the change and above %(floor)s %(unit)s")
                % values
            )
        return _("above %(ratio)sx the value before the change") % values
    return f"{spec['comparator']} {spec['threshold']:g}"


def guard_signal_rows(watch) -> list[dict]:
    """A watch's signals with their thresholds in words (the card's table); a built-in
    signal's title is translated here (a runbook's comes from its catalogue)."""
    return [
        {
            **s,
            "threshold": threshold_shown(s),
            "title": _(s["title"]) if s.get("builtin") else s["title"],
        }
        for s in watch.signals
    ]


def _num(value: float | None) -> str:
    return "no data" if value is None else f"{value:.4g}"


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


def shown(spec: dict, value: float) -> str:
    if spec["type"] == "availability":
        return f"burn rate {value / (1 - spec['slo']):.3g}x (error ratio {value:.2%})"
    if spec["type"] == PODS:
        return f"{value:.0%} of groups restarting"
    return f"{_num(value)} {spec['unit']}"


def judge(spec: dict, value: float | None, baseline: float | None) -> tuple[str, str]:
    """One reading of a fleet-wide change against the value just before it: (state,
    message), ok, breach or unknown. Availability and quality breach when past the
    threshold now and not before; latency when `max_ratio` x the value before."""
    title, unit = spec["title"], spec["unit"]
    if value is None or math.isnan(value):
        return UNKNOWN, f"{title}: no data"
    if spec["type"] == "latency":
        if baseline is None or math.isnan(baseline) or baseline <= 0:
            return UNKNOWN, f"{title}: no value from before the change to compare with"
        limit = max(baseline * spec["max_ratio"], spec["min_value"])
        if value > limit:
            return BREACH, (
                f"{title} = {_num(value)} {unit} crossed {_num(limit)} {unit} "
                f"({spec['max_ratio']:g}x the {_num(baseline)} {unit} before the change)"
            )
        return OK, f"{title} = {_num(value)} {unit} (limit {_num(limit)} {unit})"
    before = None if baseline is None or math.isnan(baseline) else baseline
    now = shown(spec, value)
    if not _bad(spec, value):
        return OK, f"{title}: {now}"
    if before is not None and _bad(spec, before):
        # Past the threshold before the change too: not this change's doing.
        return OK, f"{title}: {now}, already past {threshold_text(spec)} before the change"
    if before is None and spec["type"] == "quality":
        # A quality gate past its threshold with nothing to compare: most likely the outage
        # the change is fixing, so never an undo. (An error ratio with no data before the
        # change means no errors, so availability still breaches.)
        return UNKNOWN, f"{title}: {now}, and no value from before the change to compare"
    was = f"; {_num(before)} before the change" if before is not None else ""
    return BREACH, f"{title}: {now} crossed the threshold ({threshold_text(spec)}){was}"


def judge_split(
    spec: dict, changed: float | None, unchanged: float | None, what: str, others: str
) -> tuple[str, str]:
    """The changed pods against the unchanged ones at the same instant (canary against
    baseline): a breach only when the changed part is worse by the signal's own ratio
    (latency) or is past the threshold while the others are not."""
    title, unit = spec["title"], spec["unit"]
    if _missing(changed):
        return UNKNOWN, f"{title}: no data for {what} yet"
    if _missing(unchanged):
        return UNKNOWN, f"{title}: no data for {others} to compare {what} with"
    assert changed is not None
    assert unchanged is not None
    both = f"{what} {shown(spec, changed)} against {others} {shown(spec, unchanged)}"
    if spec["type"] == "latency":
        limit = max(unchanged * spec["max_ratio"], spec["min_value"])
        if changed > limit:
            return BREACH, (
                f"{title}: {both}, above {_num(limit)} {unit} ({spec['max_ratio']:g}x {others})"
            )
        return OK, f"{title}: {both} (limit {_num(limit)} {unit})"
    if spec["type"] == PODS:
        # A share of groups: the changed ones restart, and more of them than of the rest
        # (a crash loop in the whole pool is the outage, not this change).
        if changed > 0 and changed > unchanged:
            return BREACH, f"{title}: {both}; {what} restart more than {others}"
        return OK, f"{title}: {both}"
    if _bad(spec, changed) and not _bad(spec, unchanged):
        return BREACH, f"{title}: {both}; only {what} crossed {threshold_text(spec)}"
    return OK, f"{title}: {both}"


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
    what/others, settles) and its state, streak and whether its breach counts."""
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
        spec.update(state=state, message=message, streak=0, readings=[], healthy=healthy)
        return spec
    if mode == TREND and reading.get("coincides"):
        spec.update(
            state=COINCIDES,
            streak=0,
            readings=[],
            message=(
                f"{message}, but {reading['coincides']}: a failure of its own may explain "
                "it, so it is not attributed to the change (check it yourself)"
            ),
        )
        return spec
    load = load_rise(spec, reading)
    if mode == TREND and load is not None and load >= LOAD_EXPLAINS:
        before, now = reading["load_before"], reading["load_now"]
        spec.update(
            state=EXPLAINED,
            streak=0,
            readings=[],
            message=(
                f"{message}, but the demand rose {load:.2g}x since the change "
                f"({_num(before)} -> {_num(now)} requests/s): the latency follows the load, "
                "not attributed to the change (check it yourself)"
            ),
        )
        return spec
    if mode == TREND and int(spec.get("healthy") or 0) >= HEALTHY_BEFORE_LATE:
        spec.update(
            state=LATE,
            streak=0,
            readings=[],
            message=(
                f"{message}, but only after {spec['healthy']} healthy checks since settling: "
                "a change acts at once, so a regression that starts later is not attributed "
                "to it (check it yourself)"
            ),
        )
        return spec
    primary = spec["changed"] if mode == SPLIT else spec["value"]
    streak = int(spec.get("streak") or 0) + 1
    readings = [*list(spec.get("readings") or []), primary][-max(confirm, 2) :]
    spec.update(streak=streak, readings=readings)
    if streak < confirm:
        message += f" (check {streak} of {confirm} before it counts)"
    elif mode == TREND and improving(spec, readings):
        state = IMPROVING
        trail = " → ".join(_num(r) for r in readings)
        message += f", but improving across the last checks ({trail}): not counted"
    else:
        spec["counts"] = True
        if mode == SPLIT:
            message += f" in {streak} checks in a row after settling"
        else:
            trail = ", ".join(_num(r) for r in readings[-confirm:])
            message += f" in {streak} checks in a row after settling ({trail}), not improving"
    spec.update(state=state, message=message)
    return spec


def _state(spec: dict, reading: dict, mode: str) -> tuple[str, str]:
    title = spec["title"]
    if spec["needs"]:
        return UNKNOWN, f"needs label {', '.join(spec['needs'])}"
    if reading.get("error"):
        return UNKNOWN, reading["error"]
    value = spec["changed"] if mode == SPLIT else spec["value"]
    now = "no data" if _missing(value) else shown(spec, value)
    if reading.get("settling"):
        return SETTLING, f"{title}: {now}; settling, not counted yet"
    if mode == CONTEXT:
        return CONTEXT, (
            f"{title}: {now}; gateway-wide, not attributed to {reading.get('what', 'the change')}"
        )
    if mode == SPLIT:
        what, others = reading.get("what", "the changed pods"), reading.get("others", "the others")
        state, message = judge_split(spec, spec["changed"], spec["unchanged"], what, others)
        detail = reading.get("detail")
        return state, (f"{message} ({detail})" if detail and state != UNKNOWN else message)
    if reading.get("excuse"):
        return EXCUSED, f"{title}: {now}; not blamed on the change: {reading['excuse']}"
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
