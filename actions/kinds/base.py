"""The contract every action kind keeps, and the errors it raises.

A kind is a plain object with no database access: the run services (actions/
services) persist what it returns (`Snapshot`, `Plan`) as JSON and call it again from a
Celery task, possibly on another machine, so everything here round-trips through
`as_dict()` / `from_dict()`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings

from actions.kinds import texts  # noqa: F401  (registry: the ids below)
from console.texts import Msg, StoredParts, msg


def raw(text: str) -> Msg:
    """Words the console did not write (Kubernetes', a parser's), or stored before they
    had an id: shown as they are in every language."""
    return msg("actions.raw", text=text)


def said(parts: StoredParts | None, fallback: str) -> Msg:
    """A Msg again from its stored parts; the stored English when there are none."""
    if parts and isinstance(parts, list):
        return Msg(tuple((key, dict(params or {})) for key, params in parts))
    return raw(fallback)


class ActionError(Exception):
    """A failure with a message fit for the incident timeline: `said` is what it says
    (message ids and parameters, console/texts/), `message` its English."""

    retryable = False

    def __init__(self, message: str | Msg) -> None:
        words = message if isinstance(message, Msg) else raw(message)
        super().__init__(words.english)
        self.message = words.english
        self.said = words


class NotConfigured(ActionError):
    """No kubeconfig and not in a cluster: nothing to talk to (yet)."""


class ParamError(ActionError):
    """A bad parameter; `field` names it (the API answers 400)."""

    def __init__(self, field: str, message: str | Msg) -> None:
        detail = message if isinstance(message, Msg) else raw(message)
        super().__init__(msg("actions.param.error", field=field, detail=detail))
        self.field = field


class GuardrailError(ActionError):
    """Refused by a guardrail (bounds, max step, max cordoned nodes)."""


class TargetNotFound(ActionError):
    """The object does not exist (404)."""


class Conflict(ActionError):
    """The object changed since it was read (409, or a failed JSON-patch test)."""

    retryable = True


class Transient(ActionError):
    """5xx, timeout, connection refused: worth retrying later."""

    retryable = True


class Forbidden(ActionError):
    """403: the worker's ServiceAccount lacks a permission; the message names it."""


class Invalid(ActionError):
    """422: the API server rejected the change as invalid."""


@dataclass(frozen=True)
class Snapshot:
    resource_version: str
    state: dict
    identity: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Snapshot:
        return cls(
            resource_version=str(data.get("resource_version") or ""),
            state=dict(data.get("state") or {}),
            identity=dict(data.get("identity") or {}),
        )


@dataclass(frozen=True)
class Plan:
    """`summary` and `warnings` are English (stored beside their parts, `summary_msg` and
    `warnings_msg`, which a reader words in their language)."""

    desired: dict
    diff: str
    summary: str
    warnings: list[str] = field(default_factory=list)
    summary_msg: StoredParts | None = None
    warnings_msg: list[StoredParts] | None = None

    @classmethod
    def of(cls, desired: dict, diff: str, summary: Msg, warnings: Sequence[Msg] = ()) -> Plan:
        return cls(
            desired,
            diff,
            summary.english,
            [w.english for w in warnings],
            summary.stored,
            [w.stored for w in warnings],
        )

    @property
    def summary_said(self) -> Msg:
        return said(self.summary_msg, self.summary)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Plan:
        return cls(
            desired=dict(data.get("desired") or {}),
            diff=str(data.get("diff") or ""),
            summary=str(data.get("summary") or ""),
            warnings=list(data.get("warnings") or []),
            summary_msg=data.get("summary_msg") or None,
            warnings_msg=data.get("warnings_msg") or None,
        )


@dataclass(frozen=True)
class Revision:
    id: int | str
    label: str | Msg  # "r12: before run #40", worded in the reader's language
    data: dict[str, str]
    captured_at: datetime


@dataclass(frozen=True)
class Subject:
    """What a run changes, as alert labels: an alert whose labels include all of `labels`
    is about it. `name` says it in a sentence ("lws vllm-chat in llm-prod")."""

    labels: dict[str, str]
    name: Msg


def lws_subject(namespace: str, lws: str) -> Subject:
    # The alert rules label every LWS-level alert with namespace and lws.
    return Subject(
        {"namespace": namespace, "lws": lws},
        msg("actions.subject.lws", lws=lws, namespace=namespace),
    )


def configmap_subjects(namespace: str, configmap: str) -> list[Subject]:
    """A router/gateway ConfigMap routes the traffic of every pool in its namespace, so an
    alert about any of them (the rules label them namespace + lws) is about it too."""
    return [
        Subject(
            {"namespace": namespace, "configmap": configmap},
            msg("actions.subject.configmap", configmap=configmap, namespace=namespace),
        ),
        Subject(
            {"namespace": namespace},
            msg("actions.subject.routed", configmap=configmap, namespace=namespace),
        ),
    ]


@dataclass(frozen=True)
class GuardSplit:
    """What a change touched, for the guard to judge it on those pods against the others
    at the same time (a canary against its baseline, as Argo Rollouts and Flagger do).

    `changed`: the leader pods of the changed groups (vLLM engine series exist per group
    leader and carry `pod`); the others are every other pod of the LWS. `by_revision`:
    a roll-out, whose changed pods are found at each check instead: the pods on a template
    revision that did not exist before the change. `what`/`others` say it in English,
    `what_msg`/`others_msg` hold their parts (the guard words them in the reader's
    language; a split stored before has none). Build one with `GuardSplit.of`."""

    what: str
    others: str
    changed: tuple[str, ...] = ()
    by_revision: bool = False
    what_msg: list | None = None
    others_msg: list | None = None

    @classmethod
    def of(
        cls, what: Msg, others: Msg, *, changed: tuple[str, ...] = (), by_revision: bool = False
    ) -> GuardSplit:
        return cls(
            what=what.english,
            others=others.english,
            changed=changed,
            by_revision=by_revision,
            what_msg=what.stored,
            others_msg=others.stored,
        )

    def as_dict(self) -> dict:
        return {**asdict(self), "changed": list(self.changed)}

    @classmethod
    def from_dict(cls, data: dict) -> GuardSplit:
        def parts(key: str) -> list | None:
            value = data.get(key)
            return value if isinstance(value, list) and value else None

        return cls(
            what=str(data.get("what") or ""),
            others=str(data.get("others") or ""),
            changed=tuple(data.get("changed") or ()),
            by_revision=bool(data.get("by_revision")),
            what_msg=parts("what_msg"),
            others_msg=parts("others_msg"),
        )


@dataclass
class Context:
    incident_started_at: datetime | None = None
    # (namespace, configmap, spec, incident_started_at) -> Revision; spec is
    # "before_incident" | "previous" | a revision id; raises ParamError when there is none.
    revision_lookup: Callable[[str, str, str, datetime | None], Revision] | None = None


class ActionKind:
    """Base class; each kind overrides every method below except the helpers."""

    name: str = ""
    title: str = ""
    risky: bool = False
    undoable: bool = True

    def clean(self, params: dict) -> dict:
        raise NotImplementedError

    def target(self, params: dict) -> str:
        raise NotImplementedError

    def read(self, api, params: dict) -> Snapshot:
        raise NotImplementedError

    def plan(self, current: Snapshot, params: dict, ctx: Context) -> Plan:
        raise NotImplementedError

    def dry_run(self, api, params: dict, current: Snapshot, plan: Plan) -> Msg:
        raise NotImplementedError

    def apply(self, api, params: dict, current: Snapshot, plan: Plan) -> Snapshot:
        raise NotImplementedError

    def verify(self, api, params: dict, plan: Plan) -> tuple[bool, Msg]:
        raise NotImplementedError

    def already_applied(self, current: Snapshot, before: Snapshot, plan: Plan) -> bool:
        return current.state == plan.desired

    def undo_params(self, params: dict, before: Snapshot) -> dict:
        raise NotImplementedError

    def subjects(self, params: dict, current: Snapshot | None) -> list[Subject]:
        """The objects this run changes, as alert labels, most specific first. An open
        incident at an approval severity whose alerts match one needs a second person.
        `current` is None when Kubernetes could not be read."""
        return []

    def approval_note(
        self, params: dict, current: Snapshot | None, plan: Plan | None
    ) -> Msg | None:
        """Why this very change needs a second person whatever the severity (a sentence);
        None if it does not."""
        return None

    def guard_split(self, params: dict, before: Snapshot, plan: Plan) -> GuardSplit | None:
        """The evidence a regression of this change needs: the changed pods, judged
        against the unchanged ones (GuardSplit), or None when the change is fleet-wide
        (every pod, the router, the gateway), judged by its trend after settling."""
        return None

    def configmap_of(self, params: dict) -> str | None:
        """The ConfigMap this kind changes with `params` (which may hold placeholders), or
        None for a kind that changes no ConfigMap. The guard watches a change made outside
        the console only on an incident whose runbook offers an action on that ConfigMap."""
        return None

    def __repr__(self) -> str:
        return f"<ActionKind {self.name}>"


# --- parameter helpers shared by the kinds ----------------------------------------------
# RFC 1123 names: what Kubernetes accepts for namespaces, pods, nodes, ConfigMaps.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def check_params(params: Any, allowed: set[str]) -> dict:
    if not isinstance(params, dict):
        raise ParamError("params", msg("actions.param.object"))
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ParamError(
            unknown[0], msg("actions.param.unknown", allowed=", ".join(sorted(allowed)))
        )
    return params


def name_param(params: dict, key: str, *, default: str | None = None, label: bool = True) -> str:
    """A Kubernetes object name (DNS-1123 label, or subdomain for nodes/ConfigMaps)."""
    value = params.get(key, default)
    if value is None or value == "":
        raise ParamError(key, msg("actions.param.required"))
    if not isinstance(value, str):
        raise ParamError(key, msg("actions.param.string"))
    value = value.strip()
    pattern, limit = (_DNS_LABEL, 63) if label else (_DNS_SUBDOMAIN, 253)
    if len(value) > limit or not pattern.match(value):
        raise ParamError(key, msg("actions.param.bad_name", value=repr(value)))
    return value


def namespace_param(params: dict) -> str:
    # The namespace the console's RBAC Role grants (deploy/k8s/rbac.yaml) is the default.
    return name_param(params, "namespace", default=settings.ACTIONS_K8S_NAMESPACE)


def int_param(params: dict, key: str, *, low: int | None = None, high: int | None = None) -> int:
    value = params.get(key)
    # Form posts send strings; JSON sends numbers. A bool is never a count.
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ParamError(key, msg("actions.param.integer"))
    if low is not None and value < low:
        raise ParamError(key, msg("actions.param.at_least", low=low, value=value))
    if high is not None and value > high:
        raise ParamError(key, msg("actions.param.at_most", high=high, value=value))
    return value


def bool_param(params: dict, key: str, *, default: bool | None = None) -> bool:
    value = params.get(key, default)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        value = value.strip().lower() in _TRUE
    if not isinstance(value, bool):
        which = "actions.param.bool" if value is not None else "actions.param.required"
        raise ParamError(key, msg(which))
    return value


def exactly_one(params: dict, keys: tuple[str, str]) -> str:
    present = [k for k in keys if params.get(k) not in (None, "")]
    if len(present) != 1:
        raise ParamError(keys[0], msg("actions.param.one_of", first=keys[0], second=keys[1]))
    return present[0]
