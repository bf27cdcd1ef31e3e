"""Preview text: unified diffs of the fields a kind manages, current -> desired."""

from __future__ import annotations

import difflib
import json

import yaml


def as_text(value) -> str:
    """A stable, readable rendering of a state dict (YAML, keys in their own order)."""
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=False, width=1000)


def unified(before: str, after: str, name: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{name} (current)",
        tofile=f"{name} (desired)",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text or f"(no change to {name})\n"


def state_diff(before: dict, after: dict, name: str) -> str:
    return unified(as_text(before), as_text(after), name)


def pretty_value(value: str) -> str:
    """A ConfigMap value: pretty JSON (keys sorted, so a reorder is not a change) or as is."""
    try:
        return json.dumps(json.loads(value), indent=2, sort_keys=True) + "\n"
    except (TypeError, ValueError):
        return value if value.endswith("\n") else value + "\n"


def data_diff(before: dict[str, str], after: dict[str, str], name: str) -> str:
    """Per-key diff of ConfigMap data; keys added or removed show against an empty side."""
    parts = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        parts.append(
            "".join(
                line if line.endswith("\n") else line + "\n"
                for line in difflib.unified_diff(
                    pretty_value(old).splitlines(keepends=True) if old is not None else [],
                    pretty_value(new).splitlines(keepends=True) if new is not None else [],
                    fromfile=f"{name} data[{key}] (current)" if old is not None else "/dev/null",
                    tofile=f"{name} data[{key}] (desired)" if new is not None else "/dev/null",
                )
            )
        )
    return "".join(parts) or f"(no change to {name})\n"
