"""The end-to-end storm of issue #14: what Alertmanager sends a console during a bad hour.

Bodies are Alertmanager webhook v4 notifications of 50 alerts (labels alertname, cluster,
namespace, lws, pod, severity), one groupKey per (cluster, alertname). Each notification
is 40% a new group, 40% an unchanged repeat of a firing group (repeat_interval) and 20%
the resolution of a whole firing group. Each client thread owns its groups, so one
group's notifications are sent in order, never two at once, as Alertmanager does.

Everything is generated up front from a seed (the clients only send bytes), and each
notification carries the rows a raw upsert of it writes (the in-run baseline).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from psycopg.types.json import Jsonb

from incidents.ingest.parse import labels_fingerprint  # the fingerprint Alertmanager sends

ALERTS_PER_BODY = 50
NEW, REPEAT, RESOLVE = "new", "repeat", "resolve"
KINDS = (
    ("VLLMHighTTFT", "critical", "TTFT p99 above 10s on {pod}"),
    ("VLLMKVCachePressure", "warning", "KV cache above 95% on {pod}"),
    ("VLLMEngineStalled", "critical", "Engine on {pod} produces no tokens"),
    ("VLLMQueueBacklog", "warning", "More than 50 requests waiting on {pod}"),
)
NAMESPACE = "llm-serving"
LWS_PER_GROUP = 10  # vllm-chat-<lws>-<i>: 10 leader-worker sets x 5 pods = 50 alerts
BASE_TIME = datetime(2026, 10, 5, 2, 0, tzinfo=UTC)
GO_ZERO_TIME = "0001-01-01T00:00:00Z"


def rfc3339(ms: int) -> str:
    """Go's time.MarshalJSON of BASE_TIME + `ms` milliseconds (trailing zeros trimmed)."""
    t = BASE_TIME + timedelta(milliseconds=ms)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        text += "." + f"{t.microsecond:06d}".rstrip("0")
    return text + "Z"


@dataclass
class Group:
    thread: int
    index: int
    group_key: str
    group_labels: dict[str, str]
    alerts: list[dict]
    starts: list[datetime]
    firing: bool = True
    ends_at: datetime | None = None  # when the whole group resolved
    body: bytes = b""
    rows: list[tuple] = field(default_factory=list)


@dataclass
class Notification:
    group_key: str
    kind: str  # NEW / REPEAT / RESOLVE
    body: bytes
    rows: list[tuple]  # the baseline's upsert parameters, one tuple per alert


def new_group(thread: int, index: int, clock_ms: int, rng: random.Random) -> Group:
    alertname, severity, summary = KINDS[index % len(KINDS)]
    cluster = f"gpu-t{thread}-{index // len(KINDS):05d}"
    group_labels = {"alertname": alertname, "cluster": cluster}
    pairs = ", ".join(f'{k}="{v}"' for k, v in sorted(group_labels.items()))
    alerts, starts = [], []
    for n in range(ALERTS_PER_BODY):
        lws = f"vllm-chat-{n % LWS_PER_GROUP}"
        pod = f"{lws}-{n // LWS_PER_GROUP}"
        labels = {
            "alertname": alertname,
            "cluster": cluster,
            "namespace": NAMESPACE,
            "lws": lws,
            "pod": pod,
            "severity": severity,
        }
        start_ms = clock_ms - rng.randrange(1_000, 30_000)
        alerts.append(
            {
                "status": "firing",
                "labels": labels,
                "annotations": {
                    "summary": summary.format(pod=pod),
                    "description": f"{alertname} on {pod} ({lws}, {cluster}) for 5m.",
                },
                "startsAt": rfc3339(start_ms),
                "endsAt": GO_ZERO_TIME,
                "generatorURL": f"http://prometheus-{cluster}:9090/graph?g0.expr={alertname}",
                "fingerprint": labels_fingerprint(labels),
            }
        )
        starts.append(BASE_TIME + timedelta(milliseconds=start_ms))
    return Group(thread, index, f"{{}}:{{{pairs}}}", group_labels, alerts, starts)


def render(group: Group) -> None:
    firing = group.firing
    body = {
        "receiver": "incident-console",
        "status": "firing" if firing else "resolved",
        "alerts": group.alerts,
        "groupLabels": group.group_labels,
        "commonLabels": {**group.group_labels, "namespace": NAMESPACE},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "version": "4",
        "groupKey": group.group_key,
        "truncatedAlerts": 0,
    }
    group.body = json.dumps(body, separators=(",", ":")).encode()
    group.rows = [
        (
            a["fingerprint"],
            start,
            a["labels"]["alertname"],
            a["status"],
            a["labels"]["severity"],
            Jsonb(a["labels"]),
            Jsonb(a["annotations"]),
            None if firing else group.ends_at,
            a["generatorURL"],
            group.group_key,
        )
        for a, start in zip(group.alerts, group.starts, strict=True)
    ]


def resolve(group: Group, end_ms: int) -> None:
    """Every alert of the group resolved at `end_ms` (after every startsAt: those are at
    least 1 s before the group's first notification)."""
    group.firing = False
    group.ends_at = BASE_TIME + timedelta(milliseconds=end_ms)
    for a in group.alerts:
        a["status"] = "resolved"
        a["endsAt"] = rfc3339(end_ms)
    render(group)


def thread_storm(thread: int, count: int, seed: int) -> list[Notification]:
    """`count` notifications for one client thread (its own groups)."""
    rng = random.Random(f"{seed}-{thread}")
    firing: list[Group] = []
    made = 0
    clock_ms = 0
    out: list[Notification] = []
    for _ in range(count):
        clock_ms += rng.randrange(50, 500)
        r = rng.random()
        if r < 0.4 or not firing:
            group = new_group(thread, made, clock_ms, rng)
            made += 1
            render(group)
            firing.append(group)
            out.append(Notification(group.group_key, NEW, group.body, group.rows))
        elif r < 0.8:
            group = rng.choice(firing)
            out.append(Notification(group.group_key, REPEAT, group.body, group.rows))
        else:
            group = firing.pop(rng.randrange(len(firing)))
            resolve(group, clock_ms - rng.randrange(0, 500))
            out.append(Notification(group.group_key, RESOLVE, group.body, group.rows))
    return out


def expected_state(sent: list[Notification]) -> dict[str, str]:
    """groupKey -> the status its incident must end in, for the notifications sent."""
    state: dict[str, str] = {}
    for note in sent:
        if note.kind == NEW:
            state[note.group_key] = "triggered"
        elif note.kind == RESOLVE:
            state[note.group_key] = "mitigated"
    return state
