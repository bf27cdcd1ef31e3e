"""The runbook catalogue's data model: frozen dataclasses and their vocabularies.

Parsing and validation live in `runbooks.parsing.runbook`; this module only says what a valid
runbook is made of.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.db.models import Field

from incidents.models import Severity

PLACEHOLDERS = ("namespace", "lws", "pod", "node")
COMPARATORS = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}
# The action kinds a runbook may name are registered by the actions app:
# runbooks.action_kinds.
CATEGORIES = ("resource", "communication", "scheduling", "model", "framework", "upstream")
SEVERITIES = tuple(Severity.values)
# What a triage check can say. Only "firing" ever makes a condition true.
STATES = ("firing", "ok", "no_data", "error")
# The three kinds of guard signal (runbooks/parsing/guard.py, actions/guard/judge.py).
GUARD_TYPES = ("availability", "latency", "quality")
# Where a guard signal's series come from: "pod" = per-pod vLLM engine series (a change
# that touched some pods is judged on them against the others), "gateway" = no pod label.
GUARD_SCOPES = ("gateway", "pod")


def action_item_choices(field_name: str) -> tuple[str, ...]:
    """What postmortems accepts as an action item's `field_name` ("category",
    "priority"): a runbook's long-term items become its suggested action items. Asked of
    the app registry, not imported: postmortems sits above runbooks, which never imports
    it."""
    field = apps.get_model("postmortems", "ActionItem")._meta.get_field(field_name)
    assert isinstance(field, Field)
    return tuple(str(value) for value, _ in field.flatchoices)


def action_item_label(field_name: str, value: str) -> str:
    """The label postmortems gives a choice of its action items ("automation" ->
    Automation, in the active language); the value itself when it has none."""
    field = apps.get_model("postmortems", "ActionItem")._meta.get_field(field_name)
    assert isinstance(field, Field)
    return str(dict(field.flatchoices).get(value, value))


class CatalogError(ValueError):
    """A catalogue file is invalid. The message names the file and the field path."""


@dataclass(frozen=True)
class Category:
    name: str
    title: str
    examples: tuple[str, ...]
    defences: tuple[str, ...]


@dataclass(frozen=True)
class Check:
    """A triage question answered by one PromQL query returning a single number."""

    id: str
    question: str
    promql: str
    comparator: str
    threshold: float
    unit: str
    requires: tuple[str, ...]  # placeholders the query needs filled from alert labels

    def state_for(self, value: float | None) -> str:
        """ "firing" when `value <comparator> threshold` holds, else "ok"; a missing or
        NaN value is "no_data" (NaN compares false, which would read as healthy)."""
        if value is None or math.isnan(value):
            return "no_data"
        return "firing" if COMPARATORS[self.comparator](value, self.threshold) else "ok"


@dataclass(frozen=True)
class Condition:
    """A tiny boolean expression over check ids, JSON-able as written in YAML:
    `"check_id"` | `{all: [...]}` | `{any: [...]}` | `{not: <condition>}`."""

    op: str  # "check" | "all" | "any" | "not"
    check: str | None = None
    args: tuple[Condition, ...] = ()

    def check_ids(self) -> set[str]:
        if self.op == "check":
            return {self.check or ""}
        return set().union(*(a.check_ids() for a in self.args))

    def to_data(self) -> Any:
        if self.op == "check":
            return self.check
        if self.op == "not":
            return {"not": self.args[0].to_data()}
        return {self.op: [a.to_data() for a in self.args]}


@dataclass(frozen=True)
class Branch:
    id: str
    when: Condition | None  # None: the final catch-all
    diagnosis: str
    recommended_actions: tuple[str, ...]


@dataclass(frozen=True)
class ActionRef:
    """An emergency action: an action kind with default parameters whose
    string values may hold placeholders, filled from the incident's alert labels."""

    kind: str
    title: str
    params: dict[str, Any]
    why: str
    requires: tuple[str, ...]


@dataclass(frozen=True)
class Command:
    title: str
    command: str
    requires: tuple[str, ...]


@dataclass(frozen=True)
class ActionItemTemplate:
    title: str
    description: str
    category: str
    priority: str

    @property
    def category_label(self) -> str:
        """The category as postmortems' action items name it, in the active language."""
        return action_item_label("category", self.category)


@dataclass(frozen=True)
class Signal:
    id: str
    title: str
    promql: str
    unit: str
    requires: tuple[str, ...]


@dataclass(frozen=True)
class GuardSignal:
    """One golden signal watched after a change, with its threshold.

    availability: `promql` is an error ratio; breach when its burn rate against `slo`
    exceeds `max_burn` and did not already before the change. latency: breach when the
    value exceeds `max_ratio` x the value just before the change (and `min_value`).
    quality: breach when `value <comparator> threshold` holds and did not before.
    `scope` "pod": the series carry `pod`, so a change to some pods is judged on those
    pods against the others at the same time (actions/guard/judge.py). `alerts`: the alert
    rules that fire on this signal; while one fires in an open incident since before the
    change, the signal is not blamed on the change.
    """

    id: str
    title: str
    type: str  # one of GUARD_TYPES
    promql: str
    unit: str
    requires: tuple[str, ...]
    slo: float = 0.0
    max_burn: float = 0.0
    max_ratio: float = 0.0
    min_value: float = 0.0
    comparator: str = ""
    threshold: float = 0.0
    scope: str = "gateway"  # one of GUARD_SCOPES
    alerts: tuple[str, ...] = ()
    # latency: the demand it depends on (a request rate); a rise that comes with the
    # demand rising is the traffic's doing, not the change's.
    load: str = ""


@dataclass(frozen=True)
class Guard:
    """How long to watch after a change, how often, and what counts as a regression.
    Readings in the first `settle_seconds` are shown but never count (new groups start,
    queues drain)."""

    window_seconds: int
    interval_seconds: int
    signals: tuple[GuardSignal, ...]
    settle_seconds: int = 120


@dataclass(frozen=True)
class Runbook:
    slug: str
    title: str
    category: str
    default_severity: str
    alerts: tuple[str, ...]
    symptom: str
    triage: tuple[Check, ...]
    decision_tree: tuple[Branch, ...]
    emergency_actions: tuple[ActionRef, ...]
    diagnostic_commands: tuple[Command, ...]
    root_cause: str
    long_term: tuple[ActionItemTemplate, ...]
    golden_signals: tuple[Signal, ...]
    source: str = field(default="", compare=False)  # the file it came from
    guard: Guard | None = None  # watched after a change made for this runbook
    # Runbooks whose incidents this one leads when both open on one target within the
    # related-incident window (incidents/related/): this alert names a cause of theirs.
    leads_over: tuple[str, ...] = ()

    def check(self, check_id: str) -> Check:
        for c in self.triage:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    def branch(self, branch_id: str) -> Branch:
        for b in self.decision_tree:
            if b.id == branch_id:
                return b
        raise KeyError(branch_id)
