"""The fleet storm of tests/bench/ingest.py: a multi-cluster vLLM fleet (each cluster's
Prometheus adds a `cluster` external label; the route groups by cluster, alertname,
namespace and lws), so every (cluster, alert kind) is one groupKey whose notification
lists its 50 pods. Notifications open new groups, re-send unchanged ones
(repeat_interval), resolve some alerts while others fire again with a new startsAt,
resolve whole groups, re-fire resolved groups, and re-send resolved groups late.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from psycopg.types.json import Jsonb

from incidents.ingest.parse import labels_fingerprint  # the fingerprint Alertmanager sends

ALERTS_PER_PAYLOAD = 50
THREADS = 2


@dataclass(frozen=True)
class AlertKind:
    alertname: str
    runbook: str
    severity: str
    summary: str
    description: str
    expr: str


KINDS = (
    AlertKind(
        "VLLMHighTTFT",
        "ttft-spike",
        "critical",
        "TTFT p99 above 10s on {pod}",
        "Time to first token p99 on {pod} ({lws}, {cluster}) has been above 10s for 5m; "
        "requests are queueing (vllm:num_requests_waiting is rising).",
        "histogram_quantile(0.99, sum by (le, pod) "
        '(rate(vllm:time_to_first_token_seconds_bucket{namespace="llm-serving"}[5m]))) > 10',
    ),
    AlertKind(
        "VLLMKVCachePressure",
        "long-context-kv",
        "warning",
        "KV cache above 95% on {pod}",
        "vllm:kv_cache_usage_perc on {pod} ({lws}, {cluster}) has been above 0.95 for 5m; "
        "long-context requests are preempting short ones.",
        'vllm:kv_cache_usage_perc{namespace="llm-serving"} > 0.95',
    ),
    AlertKind(
        "VLLMEngineStalled",
        "nccl-hang",
        "critical",
        "Engine on {pod} produces no tokens",
        "{pod} ({lws}, {cluster}) has running requests but generated no tokens for 5m; "
        "a tensor-parallel peer is probably stuck in an NCCL collective.",
        "sum by (namespace, pod) (rate(vllm:generation_tokens_total[5m])) == 0 "
        "and sum by (namespace, pod) (vllm:num_requests_running) > 0",
    ),
)
NAMESPACE = "llm-serving"
LWS = "vllm-chat"
LWS_GROUPS = 10  # pods vllm-chat-<g>-<i>: 10 LWS groups x 5 pods = 50 alerts per group
PODS_PER_LWS_GROUP = ALERTS_PER_PAYLOAD // LWS_GROUPS
MODEL_VERSION = "llama-3.1-70b-instruct-2026-10"
BASE_TIME = datetime(2026, 10, 5, 2, 0, tzinfo=UTC)
GO_ZERO_TIME = "0001-01-01T00:00:00Z"


def rfc3339(ns: int) -> str:
    """Go's time.MarshalJSON: RFC 3339 with up to 9 fractional digits, zeros trimmed."""
    seconds, frac = divmod(ns, 1_000_000_000)
    text = (BASE_TIME + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + "Z"


def as_datetime(ns: int) -> datetime:
    """What PostgreSQL keeps of a timestamp: microseconds."""
    return BASE_TIME + timedelta(microseconds=ns // 1000)


@dataclass
class Slot:
    labels: dict[str, str]
    annotations: dict[str, str]
    fingerprint: str
    generator_url: str
    starts_ns: int = 0
    ends_ns: int | None = None  # set once resolved

    @property
    def firing(self) -> bool:
        return self.ends_ns is None


@dataclass
class Group:
    index: int
    cluster: str
    kind: AlertKind
    group_key: str
    group_labels: dict[str, str]
    slots: list[Slot]
    firing: bool = False
    last_body: bytes = b""
    last_rows: list[tuple] = field(default_factory=list)


@dataclass
class Notification:
    group: int
    thread: int
    event: str
    body: bytes
    rows: list[tuple]  # the baseline's upsert parameters, one tuple per alert


@dataclass
class Storm:
    notifications: list[Notification]
    events: Counter
    alert_mix: Counter
    distinct_rows: int
    final_status: Counter


def _new_group(index: int, rng: random.Random) -> Group:
    cluster = f"gpu-cluster-{index // len(KINDS) + 1:02d}"
    kind = KINDS[index % len(KINDS)]
    group_labels = {"alertname": kind.alertname, "cluster": cluster, "lws": LWS}
    group_labels["namespace"] = NAMESPACE
    pairs = ", ".join(f'{k}="{v}"' for k, v in sorted(group_labels.items()))
    slots = []
    for g in range(LWS_GROUPS):
        node = f"gpu-node-{rng.randint(1, 64)}"
        for i in range(PODS_PER_LWS_GROUP):
            pod = f"{LWS}-{g}-{i}"
            labels = {
                "alertname": kind.alertname,
                "cluster": cluster,
                "namespace": NAMESPACE,
                "lws": LWS,
                "pod": pod,
                "node": node,
                "model_version": MODEL_VERSION,
                "severity": kind.severity,
                "runbook": kind.runbook,
                "job": "vllm",
                "instance": f"10.{index % 250}.{g}.{10 + i}:8000",
            }
            fields = {"pod": pod, "lws": LWS, "cluster": cluster}
            annotations = {
                "summary": kind.summary.format(**fields),
                "description": kind.description.format(**fields),
                "runbook_url": f"http://console.example/runbooks/{kind.runbook}",
            }
            generator_url = (
                f"http://prometheus-{cluster}:9090/graph?g0.expr={quote(kind.expr, safe='')}"
                "&g0.tab=1"
            )
            slots.append(Slot(labels, annotations, labels_fingerprint(labels), generator_url))
    return Group(
        index=index,
        cluster=cluster,
        kind=kind,
        group_key=f'{{}}/{{namespace="{NAMESPACE}"}}:{{{pairs}}}',
        group_labels=group_labels,
        slots=slots,
    )


def _common(maps: Sequence[dict[str, str]]) -> dict[str, str]:
    first, *rest = maps
    return {k: v for k, v in first.items() if all(m.get(k) == v for m in rest)}


def _render(group: Group, reason: str) -> tuple[bytes, list[tuple]]:
    """One webhook body in Alertmanager's field order, and the matching upsert rows."""
    alerts, rows = [], []
    for s in group.slots:
        status = "firing" if s.firing else "resolved"
        alerts.append(
            {
                "status": status,
                "labels": s.labels,
                "annotations": s.annotations,
                "startsAt": rfc3339(s.starts_ns),
                "endsAt": GO_ZERO_TIME if s.firing else rfc3339(s.ends_ns),
                "generatorURL": s.generator_url,
                "fingerprint": s.fingerprint,
            }
        )
        rows.append(
            (
                s.fingerprint,
                as_datetime(s.starts_ns),
                s.labels["alertname"],
                status,
                s.labels["severity"],
                Jsonb(s.labels),
                Jsonb(s.annotations),
                None if s.firing else as_datetime(s.ends_ns),
                s.generator_url,
                group.group_key,
            )
        )
    body = {
        "receiver": "incident-console",
        "status": "firing" if any(s.firing for s in group.slots) else "resolved",
        "alerts": alerts,
        "notification_reason": reason,
        "groupLabels": group.group_labels,
        "commonLabels": _common([s.labels for s in group.slots]),
        "commonAnnotations": _common([s.annotations for s in group.slots]),
        "externalURL": "http://alertmanager:9093",
        "version": "4",
        "groupKey": group.group_key,
        "truncatedAlerts": 0,
    }
    return json.dumps(body, separators=(",", ":")).encode(), rows


def build_storm(n: int, seed: int) -> Storm:
    rng = random.Random(seed)
    groups: list[Group] = []
    notifications: list[Notification] = []
    events: Counter = Counter()
    alert_mix: Counter = Counter()
    last_status: dict[tuple[str, int], str] = {}
    clock = 0  # ns since BASE_TIME

    def start(slot: Slot) -> None:
        # Within group_wait (30s) before the notification, after the previous episode.
        starts = clock - rng.randrange(10**9, 30_000_000_000) + rng.randrange(1, 10**9)
        if slot.ends_ns is not None:
            starts = max(starts, slot.ends_ns + rng.randrange(1_000_000, 2_000_000))
        slot.starts_ns, slot.ends_ns = starts, None

    def end(slot: Slot) -> None:
        ends = clock - rng.randrange(0, 30_000_000_000)
        slot.ends_ns = max(ends, slot.starts_ns + rng.randrange(1_000_000, 2_000_000))

    for _ in range(n):
        clock += rng.randrange(500_000_000, 20_000_000_000)
        firing = [g for g in groups if g.firing]
        quiet = [g for g in groups if not g.firing]
        r = rng.random()
        if not firing or r < 0.25:
            if quiet and rng.random() < 0.3:
                event, group = "refire", rng.choice(quiet)  # same groupKey fires again
            else:
                event, group = "new", _new_group(len(groups), rng)
                groups.append(group)
            for s in group.slots:
                start(s)
            group.firing = True
            reason = "first notification" if event == "new" else "new alerts added"
        elif r < 0.6:
            # An unchanged group, sent again (repeat_interval, or a retry that had landed);
            # now and then a group that resolved earlier, re-sent late.
            pool = quiet if quiet and rng.random() < 0.15 else firing
            event, group = ("late-resolved" if pool is quiet else "repeat"), rng.choice(pool)
            notifications.append(
                Notification(group.index, 0, event, group.last_body, group.last_rows)
            )
            events[event] += 1
            for row in group.last_rows:
                alert_mix["re-sent"] += 1
                last_status[(row[0], row[1])] = row[3]
            continue
        elif r < 0.85:
            # Some pods recover, and the ones that recovered last time fire again.
            event, group = "partial", rng.choice(firing)
            for s in group.slots:
                if not s.firing:
                    start(s)
            live = [s for s in group.slots if s.firing]
            for s in rng.sample(live, rng.randint(3, 15)):
                end(s)
            reason = "some alerts resolved"
        else:
            event, group = "resolve", rng.choice(firing)
            for s in group.slots:
                if s.firing:
                    end(s)
            group.firing = False
            reason = "all alerts resolved"
        body, rows = _render(group, reason)
        group.last_body, group.last_rows = body, rows
        notifications.append(Notification(group.index, 0, event, body, rows))
        events[event] += 1
        for row in rows:
            key, status = (row[0], row[1]), row[3]
            previous = last_status.get(key)
            if previous is None:
                alert_mix["new"] += 1
            elif previous == status:
                alert_mix["re-sent"] += 1
            else:
                alert_mix["resolved"] += 1
            last_status[key] = status

    # One group's notifications stay on one thread, in order; groups spread over threads.
    for note in notifications:
        note.thread = note.group % THREADS
    return Storm(
        notifications=notifications,
        events=events,
        alert_mix=alert_mix,
        distinct_rows=len(last_status),
        final_status=Counter(last_status.values()),
    )
