"""An incident's alerts and its row, as COPY text lines (its timeline: timeline.py).

The alerts of an incident are drawn from its own seeded Random, so the alert rows and
the timeline (which names the same alerts) agree without keeping 30M alerts in memory:
each pass draws them again. Lines are pre-formatted text, the JSON too: every string in
them comes from the fleet's names and texts.py, none needing an escape."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from postmortems.fleet_year import texts
from postmortems.fleet_year.clock import Clock, opt
from postmortems.fleet_year.fleet import NODE_KINDS, Fleet
from postmortems.fleet_year.plan import Inc

AM_SEVERITY = {"SEV1": "critical", "SEV2": "error", "SEV3": "warning", "SEV4": "info"}
PROMETHEUS = "http://prometheus:9090"
_MIX, _MASK = 0x9E3779B97F4A7C15, (1 << 64) - 1
N = "\\N"
ALERT_FIELDS = (
    "id",
    "fingerprint",
    "starts_at",
    "alertname",
    "status",
    "severity",
    "labels",
    "annotations",
    "ends_at",
    "generator_url",
    "grouping_key",
    "incident",
    "first_received_at",
    "last_received_at",
    "receive_count",
)
INCIDENT_FIELDS = (
    "id",
    "title",
    "severity",
    "status",
    "grouping_key",
    "runbook",
    "namespace",
    "group_labels",
    "commander",
    "started_at",
    "triggered_at",
    "acknowledged_at",
    "mitigated_at",
    "resolved_at",
    "reopened_at",
    "reopen_count",
    "last_alert_at",
    "is_drill",
    "is_demo",
    "related_to",
    "linked_at",
    "linked_by",
    "merged_at",
    "alert_digest",
    "last_notified_at",
    "created_at",
    "updated_at",
)
dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def fingerprint(group: int, pod: int) -> str:
    """Alertmanager's fingerprint stands for a label set: the same (group, pod) has the
    same one in every incident of the group (a bijection, so no two differ by accident)."""
    return f"{((group << 12 | pod) * _MIX) & _MASK:016x}"


@dataclass(slots=True)
class Shape:
    """What an incident's alerts look like; `rng` continues into the alerts."""

    rng: random.Random
    alertname: str
    lws_name: str
    ns: str
    pods: tuple[str, ...]
    nodes: tuple[str, ...] | None
    first: int  # the pod of the first alert
    title: str
    summary: str  # annotations JSON with \0 where the pod goes ("" if no pod is named)
    annotations: str  # JSON, when the summary does not name the pod
    labels_head: str
    labels_tail: str
    runbook: str
    team: str
    cluster: str


def shape(inc: Inc, fleet: Fleet) -> Shape:
    rng = random.Random(inc.seed)  # noqa: S311 (a reproducible year, not a secret)
    k = len(fleet.kinds)
    kind, lws = fleet.kinds[inc.group % k], fleet.lws[inc.group // k]
    first = rng.randrange(len(lws.pods))
    with_node = kind.slug in NODE_KINDS or rng.random() < 0.4
    values = {
        "ns": lws.namespace,
        "lws": lws.name,
        "node": lws.nodes[first],
        "alertname": kind.alertname,
        "secs": round(rng.uniform(2.2, 14.0), 1),
        "pct": rng.randint(4, 97),
        "gpu": rng.randrange(8),
        "ver": rng.randint(2, 40),
        "pod": "{pod}",
    }
    template = texts.SUMMARY.get(kind.alertname, texts.SUMMARY_OTHER).format(**values)
    summary = template.format(pod=lws.pods[first])
    name = kind.alertname
    title = (summary if name.lower() in summary.lower() else f"{name}: {summary}")[:300]
    ann_tail = f'","runbook_url":"/runbooks/{kind.slug}/"}}'
    per_pod = "{pod}" in template
    return Shape(
        rng=rng,
        alertname=name,
        lws_name=lws.name,
        ns=lws.namespace,
        pods=lws.pods,
        nodes=lws.nodes if with_node else None,
        first=first,
        title=title,
        summary=('{"summary":"' + template.replace("{pod}", "\0") + ann_tail) if per_pod else "",
        annotations="" if per_pod else '{"summary":"' + summary + ann_tail,
        labels_head=f'{{"alertname":"{name}","cluster":"{lws.cluster}","lws":"{lws.name}",'
        f'"namespace":"{lws.namespace}",',
        labels_tail=f'"runbook":"{kind.slug}","severity":"{AM_SEVERITY[inc.sev]}",'
        f'"team":"{lws.team}"}}',
        runbook=kind.slug,
        team=lws.team,
        cluster=lws.cluster,
    )


@dataclass(slots=True)
class Alerts:
    """An incident's alerts in start order, and the notifications that carried them."""

    pods: list[int]
    starts: list[int]
    ends: list[int]  # 0: still firing
    first_rx: list[int]
    last_rx: list[int]
    fired: list[tuple[int, list[int]]]  # (when, alert indexes) per notification
    resolved: list[tuple[int, list[int]]]


def _chunks(rng: random.Random, items: list[int], count: int) -> list[list[int]]:
    if count <= 1 or len(items) <= 1:
        return [items]
    cuts = sorted(rng.sample(range(1, len(items)), min(count, len(items)) - 1))
    return [items[a:b] for a, b in zip([0, *cuts], [*cuts, len(items)], strict=True)]


def _spread(
    waves: list[tuple[int, list[int]]], low: list[int] | None = None, cap: int = 0
) -> list[tuple[int, list[int]]]:
    """One notification per second: a wave on the same second as the one before moves a
    second later, or, when resolved waves must end by `cap`, the earlier one a second
    earlier (never before its alerts were received, `low`); what cannot move merges."""
    waves = sorted(waves, key=lambda w: w[0])
    if cap:
        out: list[tuple[int, list[int]]] = []
        for when, chunk in reversed(waves):
            when = min(when, cap, out[-1][0] - 1 if out else cap)
            floor = max(low[j] for j in chunk) if low else 0
            if when < floor and out:
                out[-1][1].extend(chunk)
            else:
                out.append((max(when, floor), list(chunk)))
        return out[::-1]
    spread: list[tuple[int, list[int]]] = []
    for when, chunk in waves:
        spread.append((max(when, spread[-1][0] + 1) if spread else when, chunk))
    return spread


def alerts_of(inc: Inc, sh: Shape, end: int, wave_ratio: float) -> Alerts:
    rng, n, npods = sh.rng, inc.n_alerts, len(sh.pods)
    calm = inc.cycles[0][1] if inc.cycles else inc.mitigated  # all resolved (0: not yet)
    horizon = (calm or end - 300) - 60
    # The first alert opened the incident; the others began after it was opened (those
    # that began earlier would have been in the opening notification).
    later = max(inc.started + 1, inc.trig - 29)
    span = max(0, horizon - later)
    starts = sorted(later + int(span * rng.random() ** 2) for _ in range(n - 1))
    starts.insert(0, inc.started)
    for j in range(npods, n):  # one label set fires once at a time
        if starts[j] <= starts[j - npods]:
            starts[j] = starts[j - npods] + 1
    ends = [0] * n
    for j in range(n):
        if not calm and (j == n - 1 or rng.random() < 0.5):
            continue  # still firing
        e = starts[j] + int((horizon + 30 - starts[j]) * rng.uniform(0.2, 1.0))
        if j + npods < n:
            e = min(e, starts[j + npods] - 1)
        ends[j] = max(e, starts[j])
    if calm:
        ends[n - 1] = max(starts[n - 1], calm - 30)
    budget = max(2, round(n * wave_ratio * rng.uniform(0.7, 1.3)))
    first_rx, last_rx = [0] * n, [0] * n
    fired = [(inc.trig, [0])]
    for chunk in _chunks(rng, list(range(1, n)), max(1, budget // 2 - 1)) if n > 1 else ():
        fired.append((max(inc.trig, starts[chunk[-1]] + 30), chunk))
    fired = _spread(fired)
    for when, chunk in fired:
        for j in chunk:
            first_rx[j] = when
    done = sorted((j for j in range(n) if ends[j]), key=ends.__getitem__)
    resolved = []
    for chunk in _chunks(rng, done, max(1, budget - len(fired))) if done else ():
        when = max(ends[chunk[-1]] + 30, max(first_rx[j] for j in chunk))
        resolved.append((when, chunk))
    resolved = _spread(resolved, first_rx, calm) if calm else _spread(resolved)
    for when, chunk in resolved:
        for j in chunk:
            last_rx[j] = when
    for j in range(n):
        if not ends[j]:
            last_rx[j] = max(first_rx[j], end - rng.randrange(300))
    pods = [(sh.first + j) % npods for j in range(n)]
    return Alerts(pods, starts, ends, first_rx, last_rx, fired, resolved)


def alert_lines(inc: Inc, sh: Shape, al: Alerts, clock: Clock, first_id: int, gk: str) -> list[str]:
    ts = clock.ts
    tail = f"\t{PROMETHEUS}/graph?g0.expr={sh.alertname}\t{gk}\t{inc.id}\t"
    head = f"\t{sh.alertname}\t"
    sev = AM_SEVERITY[inc.sev]
    out = []
    for j, p in enumerate(al.pods):
        pod = sh.pods[p]
        node = f'"node":"{sh.nodes[p]}",' if sh.nodes else ""
        labels = f'{sh.labels_head}{node}"pod":"{pod}",{sh.labels_tail}'
        ann = sh.annotations or sh.summary.replace("\0", pod)
        e = al.ends[j]
        fr, lr = al.first_rx[j], al.last_rx[j]
        out.append(
            f"{first_id + j}\t{fingerprint(inc.group, p)}\t{ts(al.starts[j])}{head}"
            f"{'resolved' if e else 'firing'}\t{sev}\t{labels}\t{ann}\t{ts(e) if e else N}"
            f"{tail}{ts(fr)}\t{ts(lr)}\t{1 + (lr - fr) // 600}"
        )
    return out


def incident_line(
    inc: Inc, sh: Shape, clock: Clock, people: list[tuple[str, str]], gk: str, last_alert: int
) -> str:
    ts = clock.ts
    first_done = inc.cycles[0][2] if inc.cycles else inc.resolved
    acked = inc.acked or first_done  # a person resolving it acknowledged it in effect
    commander = people[inc.user][0] if inc.acked else N
    groups = f'{{"alertname":"{sh.alertname}","lws":"{sh.lws_name}","namespace":"{sh.ns}"}}'
    updated = max(inc.resolved, inc.mitigated, inc.acked, last_alert, inc.linked_at, inc.trig)
    return "\t".join(
        (
            str(inc.id),
            sh.title,
            inc.sev,
            inc.status,
            gk,
            sh.runbook,
            sh.ns,
            groups,
            commander,
            ts(inc.started),
            ts(inc.trig),
            opt(clock, acked),
            opt(clock, inc.mitigated),
            opt(clock, inc.resolved),
            opt(clock, inc.reopened),
            str(max(0, len(inc.cycles) - 1)),
            ts(last_alert or inc.trig),
            "t" if inc.drill else "f",
            "f",
            str(inc.related_to) if inc.related_to else N,
            opt(clock, inc.linked_at),
            N,
            N,
            "",
            ts(last_alert or inc.trig),
            ts(inc.trig),
            ts(updated),
        )
    )
