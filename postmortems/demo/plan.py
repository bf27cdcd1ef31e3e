"""The demo's 90 days of history as plain data, no database: which failures happened
when, on which part of the simulator's fleet (namespace llm-serving, LWS vllm-chat and
vllm-long, leader pods `<lws>-<group>`, nodes gpu-node-N), how fast people reacted and
what fixed it. Deterministic (a seeded Random), so every fresh `make run` tells the
same story, and spread the way on-call really is: most pages acknowledged in minutes, a
few at night in half an hour; most fixes in under an hour, some lasting an afternoon.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from runbooks.catalog import load_catalog

DAYS = 90
NAMESPACE = "llm-serving"
SEED = 25  # the issue that asked for it; any constant keeps the story stable
AM_SEVERITY = {"SEV1": "critical", "SEV2": "error", "SEV3": "warning", "SEV4": "info"}

# runbook: (how many times in 90 days, lws choices, summary template, the branch people
# confirmed most often)
STORIES: dict[str, tuple[int, tuple[str, ...], str, str]] = {
    "ttft-spike": (9, ("vllm-chat",), "TTFT p99 {v:.1f}s on {lws} ({m}x normal)", "capacity"),
    "nccl-hang": (6, ("vllm-chat", "vllm-long"),
                  "{lws} group {g}: {n} running requests, 0 tokens/s for 5m", "hang"),
    "prefix-cache-drop": (5, ("vllm-chat",),
                          "Prefix cache hit rate on {lws} fell from 81% to {p}%", "routing"),
    "retry-storm": (4, ("vllm-chat",),
                    "Requests to {lws} at {m}x normal with {p}% 5xx: clients retrying",
                    "retry_storm"),
    "garbage-output": (3, ("vllm-chat",),
                       "Canary v2 on {lws}: {p}% of answers fail the output check",
                       "bad_canary"),
    "ecc-errors": (4, ("vllm-chat", "vllm-long"), "Double-bit ECC errors on {node} GPU {gpu}",
                   "bad_gpu_in_use"),
    "cuda-graph-capture": (3, ("vllm-chat",),
                           "{lws} leaders crash-loop in CUDA graph capture ({n} restarts)",
                           "release_crashloop"),
    "long-context-kv": (6, ("vllm-chat",), "KV cache {p}% full on {lws}; {n} requests waiting",
                        "long_prompts_in_shared_pool"),
}  # fmt: skip
GROUPS = {"vllm-chat": 4, "vllm-long": 2}
NODES = 16
# Severity bumps: some ttft spikes were SEV1 (customer-facing), some KV pressure SEV4.
OTHER_SEVERITY = {"ttft-spike": "SEV1", "long-context-kv": "SEV4", "prefix-cache-drop": "SEV4"}


@dataclass(frozen=True)
class Story:
    """One past incident, start to finish."""

    runbook: str
    alertname: str
    severity: str
    summary: str
    lws: str
    pods: tuple[str, ...]
    node: str
    branch: str
    action: tuple[str, dict[str, Any]] | None  # (kind, params) of the fix that ran
    started: datetime  # impact start (the alert's startsAt)
    detect: timedelta  # -> the console opened it
    acknowledge: timedelta  # opened -> acknowledged
    act: timedelta  # acknowledged -> the fix finished
    mitigate: timedelta  # fix -> alerts resolved (mitigated)
    resolve: timedelta  # mitigated -> resolved by a person
    commander: str  # "admin" or "commander"
    postmortem: str = ""  # "", "published", "in_review" or "draft"
    drill: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def labels(self) -> dict[str, str]:
        labels = {"alertname": self.alertname, "severity": AM_SEVERITY[self.severity],
                  "runbook": self.runbook, "namespace": NAMESPACE, "lws": self.lws}  # fmt: skip
        if self.node:
            labels["node"] = self.node
        return labels

    @property
    def triggered(self) -> datetime:
        return self.started + self.detect

    @property
    def acknowledged(self) -> datetime:
        return self.triggered + self.acknowledge

    @property
    def fixed(self) -> datetime:
        return self.acknowledged + self.act

    @property
    def mitigated(self) -> datetime:
        return self.fixed + self.mitigate

    @property
    def resolved(self) -> datetime:
        return self.mitigated + self.resolve


def _minutes(rng: random.Random, low: float, high: float, tail: float = 0.0) -> timedelta:
    """Between low and high minutes, skewed short; with probability `tail` three times
    longer (the page at 3 a.m., the fix that needed a second try)."""
    value = low + (high - low) * rng.random() ** 2
    if rng.random() < tail:
        value *= 3
    return timedelta(seconds=round(value * 60))


def _fill(template: str, rng: random.Random, lws: str, group: int, node: str) -> str:
    return template.format(
        v=rng.uniform(4.5, 14.0), m=rng.choice((2, 3, 4, 5)), lws=lws, g=group,
        n=rng.randint(8, 40), p=rng.randint(4, 97 if "KV" in template else 30), node=node,
        gpu=rng.randint(0, 7),
    )  # fmt: skip


def _action(runbook: str, labels: dict[str, str], pod: str) -> tuple[str, dict[str, Any]] | None:
    """The runbook's first emergency action with the alert's labels filled in."""
    rb = load_catalog().get(runbook)
    if rb is None or not rb.emergency_actions:
        return None
    ref = rb.emergency_actions[0]
    values = {**labels, "pod": pod}
    params: dict[str, Any] = {}
    for key, value in ref.params.items():
        if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
            value = values.get(value[1:-1], "")
        params[key] = value
    return ref.kind, params


def _starts(rng: random.Random, now: datetime, count: int) -> list[datetime]:
    """Working hours mostly, some nights and weekends, never in the last day (so nothing
    looks live and no real alert lands within the reopen window of a demo one)."""
    out = []
    for _ in range(count):
        day = now - timedelta(days=rng.uniform(1.5, DAYS - 1))
        hour = rng.choice((2, 3, 9, 10, 11, 13, 14, 15, 16, 17, 20, 22))
        out.append(day.replace(hour=hour, minute=rng.randint(0, 59), second=rng.randint(0, 59),
                               microsecond=0))  # fmt: skip
    return out


def history(now: datetime) -> list[Story]:
    """The stories, oldest first."""
    rng = random.Random(SEED)  # noqa: S311 (a story, not a secret)
    catalog = load_catalog()
    stories: list[Story] = []
    for runbook, (count, pools, template, branch) in STORIES.items():
        rb = catalog.get(runbook)
        if rb is None:  # a catalogue without this runbook: tell the rest of the story
            continue
        for started in _starts(rng, now, count):
            lws = rng.choice(pools)
            group = rng.randrange(GROUPS[lws])
            on_node = runbook in ("ecc-errors", "nccl-hang")
            node = f"gpu-node-{rng.randrange(NODES)}" if on_node else ""
            severity = rb.default_severity
            if runbook in OTHER_SEVERITY and rng.random() < 0.3:
                severity = OTHER_SEVERITY[runbook]
            pods = (
                (f"{lws}-{group}",)
                if runbook in ("nccl-hang", "ecc-errors")
                else tuple(f"{lws}-{g}" for g in range(GROUPS[lws]))
            )
            labels = {"namespace": NAMESPACE, "lws": lws, "node": node}
            night = started.hour < 7 or started.hour > 21
            urgent = severity in ("SEV1", "SEV2")
            stories.append(Story(
                runbook=runbook, alertname=rb.alerts[0], severity=severity,
                summary=_fill(template, rng, lws, group, node), lws=lws, pods=pods, node=node,
                branch=branch, action=_action(runbook, labels, pods[0]), started=started,
                detect=timedelta(seconds=rng.randint(40, 200)),
                acknowledge=_minutes(rng, 1, 6 if urgent else 25, 0.5 if night else 0.1),
                act=_minutes(rng, 4, 35, 0.15),
                mitigate=_minutes(rng, 2, 20, 0.1),
                resolve=_minutes(rng, 15, 240),
                commander=rng.choice(("admin", "commander")),
            ))  # fmt: skip
    stories.sort(key=lambda s: s.started)
    return _with_documents(stories, rng)


def _with_documents(stories: list[Story], rng: random.Random) -> list[Story]:
    """Postmortems: every SEV1 and SEV2 older than two weeks is published; one recent is
    in review and one a draft, as a team's backlog would be."""
    out = []
    cutoff = stories[-1].started - timedelta(days=14) if stories else None
    recent_urgent = 0
    for story in stories:
        state = ""
        if story.severity in ("SEV1", "SEV2"):
            if cutoff is not None and story.started < cutoff:
                state = "published"
            else:
                recent_urgent += 1
                state = {1: "in_review", 2: "draft"}.get(recent_urgent, "")
        out.append(replace(story, postmortem=state))
    return out


def drill_stories(now: datetime) -> list[Story]:
    """Six drills on vllm-chat, one a fortnight; the team got faster (the early ones were
    slow to acknowledge, one failed its recovery criterion)."""
    rng = random.Random(SEED + 1)  # noqa: S311 (a story, not a secret)
    catalog = load_catalog()
    slugs = ("ttft-spike", "nccl-hang", "prefix-cache-drop", "long-context-kv",
             "cuda-graph-capture", "ttft-spike")  # fmt: skip
    out = []
    for i, slug in enumerate(slugs):
        rb = catalog.get(slug)
        if rb is None:
            continue
        _count, _pools, template, branch = STORIES[slug]
        started = (now - timedelta(days=84 - 14 * i)).replace(hour=14, minute=0, second=0,
                                                               microsecond=0)  # fmt: skip
        lws, node = "vllm-chat", "gpu-node-3" if slug == "nccl-hang" else ""
        pods = (f"{lws}-1",)
        labels = {"namespace": NAMESPACE, "lws": lws, "node": node}
        slow = i < 2
        out.append(Story(
            runbook=slug, alertname=rb.alerts[0], severity=rb.default_severity,
            summary=_fill(template, rng, lws, 1, node), lws=lws, pods=pods, node=node,
            branch=branch, action=_action(slug, labels, pods[0]), started=started,
            detect=timedelta(seconds=rng.randint(60, 150)),
            acknowledge=timedelta(minutes=rng.randint(6, 9) if slow else rng.randint(1, 3)),
            act=_minutes(rng, 5, 12), mitigate=timedelta(minutes=25 if i == 1 else 4),
            resolve=_minutes(rng, 5, 20), commander=rng.choice(("admin", "commander")),
            drill=True,
        ))  # fmt: skip
    return out
