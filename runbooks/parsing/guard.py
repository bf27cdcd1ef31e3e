"""Parsing a runbook's optional `guard:` block: what to watch after a change and when it
counts as a regression (see `runbooks.schema.Guard`). Errors name the file and field, like
the rest of the catalogue: `ttft-spike.yaml: guard.signals[1].max_ratio: required for a
latency signal`.
"""

from __future__ import annotations

from typing import Any

from runbooks.fields import Fields
from runbooks.schema import GUARD_SCOPES, GUARD_TYPES, Guard, GuardSignal

# Watching less than a minute says nothing; more than a day holds a change hostage.
WINDOW_BOUNDS = (60, 86_400)
INTERVAL_BOUNDS = (5, 3_600)
SETTLE_BOUNDS = (0, 3_600)
# Per type: the threshold keys it needs.
TYPE_KEYS = {
    "availability": ("slo", "max_burn"),
    "latency": ("max_ratio",),
    "quality": ("comparator", "threshold"),
}
SIGNAL_KEYS = ("id", "title", "type", "promql", "unit")
SIGNAL_EXTRA_KEYS = ("scope", "alerts", "load")
# A pod-scoped signal is narrowed to some pods by adding a matcher beside this one.
POD_SCOPE_ANCHOR = 'lws="{lws}"'
OPTIONAL_KEYS = ("slo", "max_burn", "max_ratio", "min_value", "comparator", "threshold")


def _seconds(f: Fields, value: Any, path: str, bounds: tuple[int, int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise f.error(path, f"expected whole seconds; got {value!r}")
    low, high = bounds
    if not low <= value <= high:
        raise f.error(path, f"expected {low} to {high} seconds; got {value}")
    return value


def parse_guard(f: Fields, value: Any, promql) -> Guard:
    """`promql(f, value, path)` validates a template and returns (text, placeholders)."""
    d = f.mapping(
        value,
        "guard",
        required=("window_seconds", "interval_seconds", "signals"),
        optional=("settle_seconds",),
    )
    window = _seconds(f, d["window_seconds"], "guard.window_seconds", WINDOW_BOUNDS)
    interval = _seconds(f, d["interval_seconds"], "guard.interval_seconds", INTERVAL_BOUNDS)
    if interval > window:
        raise f.error("guard.interval_seconds", "must not be longer than window_seconds")
    # Default: two minutes, or half a short window.
    settle_default = min(120, window // 2)
    settle = _seconds(
        f, d.get("settle_seconds", settle_default), "guard.settle_seconds", SETTLE_BOUNDS
    )
    if settle >= window:
        raise f.error("guard.settle_seconds", "must be shorter than window_seconds")
    signals = tuple(
        _signal(f, item, f"guard.signals[{i}]", promql)
        for i, item in enumerate(f.seq(d["signals"], "guard.signals"))
    )
    f.unique([s.id for s in signals], "guard.signals", "id")
    return Guard(
        window_seconds=window, interval_seconds=interval, signals=signals, settle_seconds=settle
    )


def _signal(f: Fields, item: Any, p: str, promql) -> GuardSignal:
    d = f.mapping(item, p, required=SIGNAL_KEYS, optional=OPTIONAL_KEYS + SIGNAL_EXTRA_KEYS)
    kind = f.choice(d["type"], f"{p}.type", GUARD_TYPES)
    for key in TYPE_KEYS[kind]:
        if key not in d:
            raise f.error(f"{p}.{key}", f"required for a {kind} signal")
    for key in OPTIONAL_KEYS:
        extra = kind == "latency" and key == "min_value"
        if key in d and key not in TYPE_KEYS[kind] and not extra:
            raise f.error(f"{p}.{key}", f"not used by a {kind} signal")
    text, used = promql(f, d["promql"], f"{p}.promql")
    numbers = {k: f.number(d[k], f"{p}.{k}") for k in OPTIONAL_KEYS if k in d and k != "comparator"}
    if kind == "availability" and not 0 < numbers["slo"] < 1:
        raise f.error(f"{p}.slo", f"expected a ratio between 0 and 1; got {numbers['slo']:g}")
    if kind == "availability" and numbers["max_burn"] <= 0:
        raise f.error(f"{p}.max_burn", "expected a burn rate above 0")
    if kind == "latency" and numbers["max_ratio"] <= 1:
        raise f.error(f"{p}.max_ratio", "expected a ratio above 1 (1.5 = 50 % slower)")
    comparator = ""
    if kind == "quality":
        comparator = f.choice(d["comparator"], f"{p}.comparator", ("<", "<=", ">", ">="))
    scope = f.choice(d.get("scope", "gateway"), f"{p}.scope", GUARD_SCOPES)
    if scope == "pod" and POD_SCOPE_ANCHOR not in d["promql"]:
        raise f.error(f"{p}.promql", f"a pod-scoped signal selects with {POD_SCOPE_ANCHOR}")
    alerts = f.texts(d["alerts"], f"{p}.alerts") if "alerts" in d else ()
    load = ""
    if "load" in d:
        if kind != "latency":
            raise f.error(f"{p}.load", f"not used by a {kind} signal")
        load, load_uses = promql(f, d["load"], f"{p}.load")
        used = tuple(dict.fromkeys((*used, *load_uses)))
    return GuardSignal(
        id=f.ident(d["id"], f"{p}.id"),
        title=f.text(d["title"], f"{p}.title"),
        type=kind,
        promql=text,
        unit=f.text(d["unit"], f"{p}.unit"),
        requires=used,
        comparator=comparator,
        scope=scope,
        alerts=alerts,
        load=load,
        **numbers,
    )
