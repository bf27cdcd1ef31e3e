"""The guard's built-in error evidence of a change to some pods: container restarts of the
changed groups against the unchanged groups, from kube-state-metrics.

The runbooks' pod-scoped signals (TTFT, hit rate) come from the vLLM engines, which a
crash-looping group never runs long enough to report: its latency reads "no data" and
would leave a broken scale-up in place. Restarts are reported by Kubernetes for every
pod, so a group that keeps restarting after the change settled, while the unchanged
groups do not, is the change's doing (a bad node, image, flag or a group that cannot
start). It is built in rather than a runbook signal because the pods are the kind's own
split (actions.kinds GuardSplit), selected by name and namespace, not by the runbook's
`lws` label (kube-state-metrics series carry no `lws` label in a real cluster), and
because every runbook whose actions change some pods needs it alike.

Only restarts count. A pod that is not ready yet is shown but never counted: a new group
loads the model for minutes, longer than the settling period.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_noop

from actions.guard import judge, wording
from console.texts import Msg, msg

SIGNAL_ID = "pod_restarts"
TITLE = gettext_noop("Restarting groups (changed pods against the unchanged ones)")
UNIT = "of groups"
# An increase() of a restart counter is extrapolated; no restart reads exactly 0.
RESTARTED = 0.5
MIN_RANGE_SECONDS = 30  # at least two scrapes of kube-state-metrics in the range
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def spec() -> dict:
    """The signal a watch of a split change stores beside the runbook's (judge._spec's
    keys). `optional`: without kube-state-metrics it is shown as unknown but does not
    make the verdict unknown; `builtin`: its title is translated on the card."""
    return {
        "id": SIGNAL_ID,
        "title": TITLE,
        "type": judge.PODS,
        "unit": UNIT,
        "promql": "kube_pod_container_status_restarts_total, kube_pod_status_ready",
        "needs": [],
        "slo": None,
        "max_burn": None,
        "max_ratio": None,
        "min_value": None,
        "comparator": ">",
        "threshold": 0.0,
        "scope": "pod",
        "alerts": [],
        "optional": True,
        "builtin": True,
        **judge.not_evaluated(),
    }


@dataclass
class _Group:
    pods: set[str] = field(default_factory=set)
    not_ready: set[str] = field(default_factory=set)
    restarts: float = 0.0


def lws_names(split: dict, labels: dict[str, Any]) -> list[str]:
    """The LeaderWorkerSets of the split: the incident's, and each changed leader's
    (`<lws>-<group>`; a roll-out's changed pods are of the incident's LWS)."""
    names = {str(labels["lws"])} if labels.get("lws") else set()
    if not split.get("by_revision"):
        for pod in split.get("changed") or ():
            match = re.fullmatch(r"(.+)-\d+", pod)
            if match:
                names.add(match.group(1))
    return sorted(n for n in names if _NAME.match(n))


def group_of(pod: str, names: list[str]) -> str | None:
    """The group (its leader's name) of a leader `<lws>-<g>` or worker `<lws>-<g>-<w>`."""
    for name in sorted(names, key=len, reverse=True):
        match = re.fullmatch(rf"({re.escape(name)}-\d+)(?:-\d+)?", pod)
        if match:
            return match.group(1)
    return None


def _selector(namespace: str, names: list[str]) -> str:
    body = "|".join(names)
    ns = namespace.replace("\\", "\\\\").replace('"', '\\"')
    return f'namespace="{ns}", pod=~"({body})-[0-9]+(-[0-9]+)?"'


def _rows(data: dict | None) -> list[tuple[str, float]]:
    out = []
    for row in (data or {}).get("result") or []:
        pod = (row.get("metric") or {}).get("pod")
        try:
            value = float((row.get("value") or [0, "nan"])[1])
        except (TypeError, ValueError):
            continue
        if pod and value == value:  # not NaN
            out.append((pod, value))
    return out


def read(
    reader, split: dict | None, labels: dict[str, Any], *, range_seconds: float, settling: bool
) -> dict:
    """The reading judge.step takes: the share of changed groups with a restart in the
    last `range_seconds` (since settling) against the unchanged groups' share."""
    if split is None:
        return {"mode": judge.TREND, "error": msg("guard.pods.all_changed")}
    words = {
        "what": wording.phrase(split, "what", "guard.what.changed_pods"),
        "others": wording.phrase(split, "others", "guard.what.others"),
        "settling": settling,
    }
    none = {"mode": judge.SPLIT, "changed": None, "unchanged": None, "value": None, **words}
    namespace, names = labels.get("namespace"), lws_names(split, labels)
    if not namespace or not names:
        return {**none, "error": msg("guard.pods.no_lws")}
    if not split["ready"]:
        return {
            **none,
            "error": reader.down
            or (None if settling else msg("guard.pods.no_pod", what=words["what"])),
        }
    where = _selector(str(namespace), names)
    rng = max(MIN_RANGE_SECONDS, round(range_seconds))
    ready, error = reader.data(f'kube_pod_status_ready{{{where}, condition="true"}}')
    restarts, error2 = reader.data(
        f"increase(kube_pod_container_status_restarts_total{{{where}}}[{rng}s])"
    )
    if error or error2:
        return {**none, "error": error or error2}
    groups: dict[str, _Group] = {}
    for pod, value in _rows(ready):
        group = group_of(pod, names)
        if group is not None:
            entry = groups.setdefault(group, _Group())
            entry.pods.add(pod)
            if value < 1:
                entry.not_ready.add(pod)
    for pod, value in _rows(restarts):
        group = group_of(pod, names)
        if group is not None:
            entry = groups.setdefault(group, _Group())
            entry.pods.add(pod)
            entry.restarts += value
    changed_keys = {g for p in split["changed"] if (g := group_of(p, names)) is not None}
    changed = {k: v for k, v in groups.items() if k in changed_keys}
    unchanged = {k: v for k, v in groups.items() if k not in changed_keys}
    return {
        **none,
        "changed": _share(changed),
        "unchanged": _share(unchanged),
        "detail": _detail(changed, unchanged, rng),
        "error": "",
    }


def _share(groups: dict[str, _Group]) -> float | None:
    if not groups:
        return None
    return sum(1 for g in groups.values() if g.restarts >= RESTARTED) / len(groups)


def _detail(changed: dict[str, _Group], unchanged: dict[str, _Group], rng: int) -> Msg:
    """The evidence: which groups restarted how often, which pods are not ready."""

    def restarted(groups: dict[str, _Group]) -> Msg:
        hits = [
            f"{k} x{g.restarts:.0f}" for k, g in sorted(groups.items()) if g.restarts >= RESTARTED
        ]
        if not hits:
            return msg("guard.pods.restarted", hits=0, total=len(groups))
        names = ", ".join(hits)
        return msg("guard.pods.restarted_names", hits=len(hits), total=len(groups), names=names)

    words = {"seconds": rng, "changed": restarted(changed), "unchanged": restarted(unchanged)}
    waiting = sorted(p for g in changed.values() for p in g.not_ready)
    if waiting:
        return msg("guard.pods.detail_waiting", pods=", ".join(waiting[:6]), **words)
    return msg("guard.pods.detail", **words)
