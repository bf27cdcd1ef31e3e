"""One function per verifiable item. Each takes what was read (an LWS, a ConfigMap's data,
a Prometheus answer) and returns a Finding: the state, one line of summary and the
evidence a person can check. They do no I/O, so `sources.py` decides what is read
once and what is unknown when a source cannot be reached."""

from __future__ import annotations

from dataclasses import dataclass, field

from readiness.models import ItemState


@dataclass(frozen=True)
class Finding:
    state: str
    summary: str
    evidence: list[str] = field(default_factory=list)


def passed(summary: str, evidence: list[str]) -> Finding:
    return Finding(ItemState.VERIFIED, summary, evidence)


def failed(summary: str, evidence: list[str]) -> Finding:
    return Finding(ItemState.FAILING, summary, evidence)


def unknown(summary: str, evidence: list[str] | None = None) -> Finding:
    return Finding(ItemState.UNKNOWN, summary, evidence or [])
