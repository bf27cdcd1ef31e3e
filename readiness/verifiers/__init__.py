"""One function per verifiable item. Each takes what was read (an LWS, a ConfigMap's data,
a Prometheus answer) and returns a Finding: the state, one line of summary and the
evidence a person can check, each a Msg (readiness/texts.py) so a reader gets them in
their language. They do no I/O, so `sources.py` decides what is read once and what is
unknown when a source cannot be reached."""

from __future__ import annotations

from dataclasses import dataclass, field

from console.texts import Msg
from readiness import texts  # noqa: F401  # registry: the ids the verifiers write
from readiness.models import ItemState


@dataclass(frozen=True)
class Finding:
    state: str
    summary: Msg
    evidence: list[Msg] = field(default_factory=list)


def passed(summary: Msg, evidence: list[Msg]) -> Finding:
    return Finding(ItemState.VERIFIED, summary, evidence)


def failed(summary: Msg, evidence: list[Msg]) -> Finding:
    return Finding(ItemState.FAILING, summary, evidence)


def unknown(summary: Msg, evidence: list[Msg] | None = None) -> Finding:
    return Finding(ItemState.UNKNOWN, summary, evidence or [])
