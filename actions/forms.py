"""Turning the incident page's inputs into action parameters.

The recommended action's parameters are filled on the server from the incident's alert
labels; the dialog posts them back as `param.<name>` fields the responder may edit. Values
arrive as text, so they are read back as JSON scalars where they look like one (numbers,
true/false) and kept as text otherwise; the kind's own validation has the last word.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.utils.translation import gettext_noop

from console.bounds import parse_id
from console.errors import DomainError
from incidents.models import Incident
from runbooks.placeholders import PLACEHOLDER, fill_params, missing
from runbooks.schema import ActionRef
from runbooks.triage import incident_alerts_firing_first, incident_labels, incident_runbook

PREFIX = "param."
MAX_PARAMS = 20
INT_RE = re.compile(r"-?\d{1,9}")


def _scalar(text: str) -> Any:
    text = text.strip()
    if INT_RE.fullmatch(text):
        return int(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def coerce_params(post) -> dict[str, Any]:
    """`param.<name>` fields of a POST -> {name: value}; empty fields are left out."""
    params: dict[str, Any] = {}
    for key in list(post.keys())[:200]:
        if not key.startswith(PREFIX):
            continue
        name = key[len(PREFIX) :][:64]
        value = post.get(key, "")
        if value.strip() == "" or len(params) >= MAX_PARAMS:
            continue
        params[name] = _scalar(value)
    return params


def _fill_known(value: Any, labels: dict) -> Any:
    """Fill the placeholders the labels can fill; leave "{pod}" visible where they cannot,
    so the responder sees what to type instead of a guess."""
    if isinstance(value, str):
        if not missing(value, labels):
            return fill_params(value, labels)
        return PLACEHOLDER.sub(
            lambda m: str(labels.get(m.group(1)) or m.group(0)),
            value,
        )
    return value


def filled_params(action: ActionRef, labels: dict) -> dict[str, Any]:
    """An emergency action's parameters as the confirmation dialog shows them (and the
    triage API returns them, so a client posts what the button posts)."""
    return {k: _fill_known(v, labels) for k, v in action.params.items()}


def recommended_action(incident: Incident, index: str) -> dict[str, Any]:
    """The incident runbook's emergency action number `index`, with its parameters."""
    alerts = incident_alerts_firing_first(incident)
    runbook = incident_runbook(incident, alerts)
    if runbook is None:
        raise DomainError(
            gettext_noop("This incident has no runbook, so it has no recommended actions.")
        )
    number = parse_id(index) if not str(index).startswith("#") else None
    if number is None or number >= len(runbook.emergency_actions):
        raise DomainError(
            gettext_noop("The runbook %(runbook)s has no action number %(index)s."),
            params={"runbook": runbook.slug, "index": repr(index[:10])},
        )
    action = runbook.emergency_actions[number]
    labels = incident_labels(incident, alerts)
    params = filled_params(action, labels)
    return {"kind": action.kind, "title": action.title, "why": action.why, "params": params}
