"""Filling `{namespace}`/`{lws}`/`{pod}`/`{node}` from an incident's alert labels.

Label values come from alerts, i.e. from outside: in PromQL they are escaped as the
contents of a double-quoted string literal (and templates may only put placeholders inside
exact-match label values, which the catalogue validates); in shell commands they are
quoted with `shlex.quote` (and templates may not put placeholders inside quotes).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from runbooks.schema import PLACEHOLDERS

# `{name}` with a lower-case identifier; PromQL's own braces (`{lws="x"}`, `{}`) never match.
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SHELL_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_REGEX_MATCHER = re.compile(r'[=!]~\s*"(?:[^"\\\n]|\\.)*"')


class MissingLabel(KeyError):
    """A template needs a label the incident's alerts do not carry."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"needs label {self.name}"


def names_in(template: str) -> tuple[str, ...]:
    """Placeholder names in `template`, in first-use order, without duplicates."""
    return tuple(dict.fromkeys(PLACEHOLDER.findall(template)))


def unknown_in(template: str) -> list[str]:
    return [n for n in names_in(template) if n not in PLACEHOLDERS]


def promql_problems(template: str) -> list[str]:
    """Why a PromQL template is unsafe to fill: placeholders outside a string literal or
    inside a regex matcher (escaping a string does not escape a regex)."""
    problems = []
    if PLACEHOLDER.search(_DOUBLE_QUOTED.sub('""', template)):
        problems.append("placeholders may only appear inside double-quoted label values")
    if any(PLACEHOLDER.search(m) for m in _REGEX_MATCHER.findall(template)):
        problems.append("placeholders may not appear in regex matchers (=~, !~); use =")
    return problems


def command_problems(template: str) -> list[str]:
    """Placeholders inside shell quotes would defeat `shlex.quote`."""
    if any(PLACEHOLDER.search(m) for m in _SHELL_QUOTED.findall(template)):
        return ["placeholders may not appear inside shell quotes (they are quoted when filled)"]
    return []


def _fill(template: str, labels: Mapping[str, Any], escape: Callable[[str], str]) -> str:
    def one(match: re.Match) -> str:
        name = match.group(1)
        if name not in PLACEHOLDERS:
            raise ValueError(f"unknown placeholder {{{name}}}")
        value = labels.get(name)
        if value is None or value == "":
            raise MissingLabel(name)
        return escape(str(value))

    return PLACEHOLDER.sub(one, template)


def missing(template: str, labels: Mapping[str, Any]) -> list[str]:
    """The placeholders of `template` that `labels` cannot fill (for "needs label pod")."""
    return [n for n in names_in(template) if labels.get(n) in (None, "")]


def fill(template: str, labels: Mapping[str, Any]) -> str:
    """Plain substitution, for display text and action parameters (validated by the
    action kind's schema, never interpreted by a shell or PromQL)."""
    return _fill(template, labels, lambda v: v)


def escape_promql(value: str) -> str:
    """The contents of a PromQL double-quoted string literal."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


def fill_promql(template: str, labels: Mapping[str, Any]) -> str:
    return _fill(template, labels, escape_promql)


def fill_command(template: str, labels: Mapping[str, Any]) -> str:
    return _fill(template, labels, shlex.quote)


def fill_params(params: Any, labels: Mapping[str, Any]) -> Any:
    """Default action parameters with every string value filled (recursively)."""
    if isinstance(params, str):
        return fill(params, labels)
    if isinstance(params, Mapping):
        return {k: fill_params(v, labels) for k, v in params.items()}
    if isinstance(params, list | tuple):
        return [fill_params(v, labels) for v in params]
    return params
