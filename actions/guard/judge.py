"""The guard's judgement: read the runbook's guard signals from Prometheus and say, for
each, whether the change made it cross its threshold. Reads only; the writes (verdict,
timeline, undo, page) are in actions/guard/services.py.

A breach must be caused by the change: availability and quality gates breach when the
signal is past its threshold now and was not just before the change (a fix applied in
the middle of an outage must not be undone for the outage); latency breaches when it is
`max_ratio` times what it was just before. Without a value (Prometheus down, no data, no
baseline) a signal is "unknown", and unknown never undoes anything.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from runbooks import prometheus
from runbooks.placeholders import fill_promql, missing
from runbooks.schema import COMPARATORS, Guard, GuardSignal

OK, BREACH, UNKNOWN = "ok", "breach", "unknown"


def signal_specs(guard: Guard, labels: dict[str, Any]) -> list[dict]:
    """What a watch stores per signal: the threshold, the filled query, and room for the
    baseline, the latest value and its state."""
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
        "baseline": None,
        "value": None,
        "state": UNKNOWN,
        "message": "not evaluated yet",
    }


def threshold_text(spec: dict) -> str:
    """The threshold in words, for the card and the timeline."""
    if spec["type"] == "availability":
        return f"burn rate above {spec['max_burn']:g}x of a {spec['slo']:.2%} SLO"
    if spec["type"] == "latency":
        floor = f" and above {spec['min_value']:g} {spec['unit']}" if spec["min_value"] else ""
        return f"above {spec['max_ratio']:g}x the value before the change{floor}"
    return f"{spec['comparator']} {spec['threshold']:g}"


def threshold_shown(spec: dict) -> str:
    """threshold_text in the viewer's language, for the card (the timeline and the API
    keep the English words)."""
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
    """A watch's signals with their thresholds in words (the card's table)."""
    return [{**s, "threshold": threshold_shown(s)} for s in watch.signals]


def _num(value: float | None) -> str:
    return "no data" if value is None else f"{value:.4g}"


def _bad(spec: dict, value: float) -> bool:
    if spec["type"] == "availability":
        return value / (1 - spec["slo"]) > spec["max_burn"]
    return COMPARATORS[spec["comparator"]](value, spec["threshold"])


def judge(spec: dict, value: float | None, baseline: float | None) -> tuple[str, str]:
    """(state, message) of one signal: ok, breach or unknown. Pure; the unit tests call it."""
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
    shown = (
        f"burn rate {value / (1 - spec['slo']):.3g}x (error ratio {value:.2%})"
        if spec["type"] == "availability"
        else f"{_num(value)} {unit}"
    )
    if not _bad(spec, value):
        return OK, f"{title}: {shown}"
    if before is not None and _bad(spec, before):
        # Past the threshold before the change too: not this change's doing.
        return OK, f"{title}: {shown}, already past {threshold_text(spec)} before the change"
    if before is None and spec["type"] == "quality":
        # A quality gate past its threshold with nothing to compare: most likely the outage
        # the change is fixing, so never an undo. (An error ratio with no data before the
        # change means no errors, so availability still breaches.)
        return UNKNOWN, f"{title}: {shown}, and no value from before the change to compare"
    was = f"; {_num(before)} before the change" if before is not None else ""
    return BREACH, f"{title}: {shown} crossed the threshold ({threshold_text(spec)}){was}"


def _query(promql: str, at: float | None, down: list[str]) -> tuple[float | None, str]:
    if down:
        return None, down[0]
    try:
        data = prometheus.query(promql, at=at)
    except prometheus.PrometheusUnavailable as exc:
        if " answered 4" not in exc.message:  # Prometheus itself: stop asking this round
            down.append(exc.message)
        return None, exc.message
    value, _note = prometheus.single_value(data or {})
    if value is not None and math.isnan(value):
        value = None
    return value, ""


def evaluate(
    specs: list[dict], changed_at: datetime, confirm: int = 1
) -> tuple[str, list[dict], str]:
    """Read every signal now (and its baseline, until one was read) and judge it.
    Returns (verdict of this evaluation, updated specs, the Prometheus error or "").

    A signal breaches the verdict only after `confirm` breaching checks in a row (its
    `streak`), like Flagger's threshold or Argo Rollouts' failure limit: a fix often takes
    a minute to bite (new groups start, queues drain), and one bad reading in that minute
    must not undo it. Until then the signal shows "breach" and the watch goes on."""
    down: list[str] = []
    out = []
    for spec in specs:
        spec = dict(spec)
        if spec["needs"]:
            spec.update(state=UNKNOWN, message=f"needs label {', '.join(spec['needs'])}")
            out.append(spec)
            continue
        if spec["baseline"] is None:
            # Just before the change: rate() windows then hold only the old state.
            spec["baseline"], _ = _query(spec["promql"], changed_at.timestamp() - 1, down)
        value, error = _query(spec["promql"], None, down)
        state, message = judge(spec, value, spec["baseline"])
        streak = spec.get("streak", 0) + 1 if state == BREACH else 0
        if state == BREACH and streak < confirm:
            message += f" (check {streak} of {confirm} before it counts)"
        spec.update(value=value, state=state, message=error or message, streak=streak)
        out.append(spec)
    states = {s["state"] for s in out}
    confirmed = any(s["state"] == BREACH and s["streak"] >= confirm for s in out)
    verdict = BREACH if confirmed else UNKNOWN if UNKNOWN in states else OK
    return verdict, out, down[0] if down else ""
