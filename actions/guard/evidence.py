"""The guard's readings for one check, from Prometheus: what judge.step needs per signal.

A change with a split (actions.kinds GuardSplit) is read on its changed pods and on the
others at the same instant: the signal's query narrowed with a `pod` matcher beside its
`lws` one (vLLM engine series carry `pod`; only pod-scoped signals are narrowed, the
gateway's series have no pod and are read whole, as context). A roll-out's changed pods
are found at each check from kube-state-metrics' `kube_pod_labels`: the pods on a template
revision that did not exist just before the change. Everything else is read whole, with
its value from just before the change as the baseline. The built-in restart signal of a
split change is read by actions/guard/pods.py.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

from django.utils import timezone

from actions.guard import judge, pods, wording
from console.texts import msg
from runbooks import prometheus

# A filled `lws="..."` matcher (the pod matcher goes right after it).
_LWS_MATCHER = re.compile(r'\blws="(?:[^"\\\n]|\\.)*"')
_POD_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
REVISION_LABEL = "label_leaderworkerset_sigs_k8s_io_template_revision_hash"
NAME_LABEL = "label_leaderworkerset_sigs_k8s_io_name"


def pods_regex(pods: list[str] | tuple[str, ...]) -> str:
    """A PromQL string body matching exactly these pods (Prometheus anchors regexes)."""
    names = sorted(p for p in pods if _POD_NAME.match(p))
    return "|".join(n.replace(".", "\\\\.") for n in names)


def narrowed(promql: str, pods: list[str] | tuple[str, ...], *, others: bool = False) -> str:
    """`promql` with a pod matcher added to each lws-selected series: only `pods`, or
    every pod but them (`others`)."""
    op = "!~" if others else "=~"
    matcher = f', pod{op}"{pods_regex(pods)}"'
    return _LWS_MATCHER.sub(lambda m: m.group(0) + matcher, promql)


class Reader:
    """Instant queries for one check; the first failure of Prometheus itself stops the
    asking for the rest of the check (a 4xx for one query does not)."""

    def __init__(self) -> None:
        self.down = ""

    def value(self, promql: str, at: float | None = None) -> tuple[float | None, str]:
        data, error = self.data(promql, at)
        if data is None:
            return None, error
        value, _note = prometheus.single_value(data)
        if value is not None and math.isnan(value):
            value = None
        return value, ""

    def data(self, promql: str, at: float | None = None) -> tuple[dict | None, str]:
        if self.down:
            return None, self.down
        try:
            return prometheus.query(promql, at=at) or {}, ""
        except prometheus.PrometheusUnavailable as exc:
            if " answered 4" not in exc.message:
                self.down = exc.message
            return None, exc.message


def revisions(reader: Reader, labels: dict[str, Any], at: float | None) -> dict[str, str] | None:
    """{pod: template revision hash} of the LWS's pods at `at`; None when unreadable."""
    namespace, lws = labels.get("namespace"), labels.get("lws")
    if not namespace or not lws:
        return None
    esc = _escape
    promql = f'kube_pod_labels{{namespace="{esc(namespace)}", {NAME_LABEL}="{esc(lws)}"}}'
    data, _error = reader.data(promql, at)
    if data is None:
        return None
    out = {}
    for row in data.get("result") or []:
        metric = row.get("metric") or {}
        if metric.get("pod") and metric.get(REVISION_LABEL):
            out[metric["pod"]] = metric[REVISION_LABEL]
    return out


def _escape(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"')


def resolve_split(
    reader: Reader, split: dict | None, labels: dict[str, Any], changed_at: datetime
) -> tuple[dict | None, dict]:
    """The split for this check: {"what", "others", "changed": pods, "ready": bool}, or
    None when the change is (or has become) fleet-wide; and the split as stored, with a
    roll-out's revisions from before the change kept once read."""
    if not split:
        return None, {}
    stored = dict(split)
    if not split.get("by_revision"):
        current = {**split, "changed": list(split.get("changed") or []), "ready": True}
        return current, stored
    if "before" not in stored:
        before = revisions(reader, labels, changed_at.timestamp() - 1)
        if before is None or not before:
            return {**split, "changed": [], "ready": False}, stored
        stored["before"] = sorted(set(before.values()))
    now = revisions(reader, labels, None)
    if now is None:
        return {**split, "changed": [], "ready": False}, stored
    old = set(stored["before"])
    changed = sorted(p for p, rev in now.items() if rev not in old)
    if not any(rev in old for rev in now.values()):
        return None, stored  # rolled out everywhere: no unchanged part left, fleet-wide
    return {**split, "changed": changed, "ready": bool(changed)}, stored


def read_signal(
    reader: Reader,
    spec: dict,
    *,
    changed_at: datetime,
    settling: bool,
    split: dict | None,
    excuse: Any = "",
    coincides: Any = "",
    labels: dict[str, Any] | None = None,
    restart_range: float = 0,
) -> dict:
    """The reading judge.step takes for one signal. `excuse`/`coincides`: why the
    signal's own alert excuses it or explains its breach (alerts.signal_alerts, a Msg);
    `error` is Prometheus' own words or the guard's (a Msg)."""
    if spec["needs"]:
        return {"mode": judge.TREND}
    if spec["type"] == judge.PODS:
        return pods.read(
            reader, split, labels or {}, range_seconds=restart_range, settling=settling
        )
    baseline = spec["baseline"]
    if baseline is None:
        # Just before the change: rate() windows then hold only the old state.
        baseline, _ = reader.value(spec["promql"], changed_at.timestamp() - 1)
    if split is not None and spec.get("scope") == "pod":
        words = split_words(split, settling)
        if not split["ready"]:
            # While settling, no changed pod yet is expected (a roll-out has not begun).
            waiting = (
                None
                if settling
                else msg("guard.split.no_pod", title=wording.title(spec), what=words["what"])
            )
            error = reader.down or waiting
            none = {"changed": None, "unchanged": None, "value": None}
            return {"mode": judge.SPLIT, "baseline": baseline, "error": error, **none, **words}
        changed, error = reader.value(narrowed(spec["promql"], split["changed"]))
        unchanged, error2 = reader.value(narrowed(spec["promql"], split["changed"], others=True))
        return {
            "mode": judge.SPLIT,
            "baseline": baseline,
            "changed": changed,
            "unchanged": unchanged,
            "value": None,
            "error": error or error2,
            **words,
        }
    value, error = reader.value(spec["promql"])
    mode = judge.CONTEXT if split is not None else judge.TREND
    load: dict[str, Any] = {}
    if mode == judge.TREND and spec.get("load"):
        load_before = spec.get("load_before")
        if load_before is None:
            load_before, _ = reader.value(spec["load"], changed_at.timestamp() - 1)
        load_now, _ = reader.value(spec["load"])
        load = {"load_before": load_before, "load_now": load_now}
    return {
        **load,
        "mode": mode,
        "value": value,
        "baseline": baseline,
        "changed": None,
        "unchanged": None,
        "error": error,
        "settling": settling,
        "excuse": excuse,
        "coincides": coincides,
        "what": wording.phrase(split, "what", "guard.what.change"),
    }


def split_words(split: dict, settling: bool) -> dict[str, Any]:
    """What a split reading says of its pods: the split's phrases (words or parts)."""
    return {
        "what": wording.phrase(split, "what", "guard.what.changed_pods"),
        "others": wording.phrase(split, "others", "guard.what.others"),
        "settling": settling,
    }


def evaluate(
    specs: list[dict],
    *,
    changed_at: datetime,
    settling: bool,
    split: dict | None,
    labels: dict[str, Any],
    excuses: dict[str, Any],
    coincides: dict[str, Any] | None = None,
    confirm: int,
    restart_range: float = 0,
) -> tuple[str, list[dict], str, dict]:
    """Read and judge every signal: (verdict of this check, updated specs, the Prometheus
    error or "", the split as stored). `restart_range`: the seconds since settling, over
    which the changed groups' restarts are counted."""
    reader = Reader()
    elapsed = (timezone.now() - changed_at).total_seconds()
    current, stored = resolve_split(reader, split, labels, changed_at)
    out = []
    for spec in specs:
        reading = read_signal(
            reader,
            spec,
            changed_at=changed_at,
            settling=settling,
            split=current,
            excuse=excuses.get(spec["id"], ""),
            coincides=(coincides or {}).get(spec["id"], ""),
            labels=labels,
            restart_range=restart_range,
        )
        # A rate() over [1m] shows a change fully only a window after it: until then a
        # healthy reading is not yet the change's own (judge.step's late rule).
        reading["reacted"] = elapsed >= judge.lookback_seconds(str(spec.get("promql") or ""))
        out.append(judge.step(spec, reading, confirm))
    return judge.verdict(out), out, reader.down, stored
