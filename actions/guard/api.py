"""The guard's texts for the API, in the request's language (the caller activates it,
console/viewer.py), each beside its ids and parameters (`<field>_i18n`, null for a text
stored before it had parts). actions/serializers.py's GuardWatchSerializer adds these to
a watch (see the notes of issue 28)."""

from __future__ import annotations

from typing import Any

from actions.guard.models import GuardWatch
from actions.guard.wording import threshold_msg
from console.texts import as_api, render
from runbooks.units import unit_word


def guard_texts_api(watch: GuardWatch) -> dict[str, Any]:
    """`verdict_reason` and `last_error` worded, with their `_i18n`."""
    texts = watch.texts or {}
    out: dict[str, Any] = {}
    for field in ("verdict_reason", "last_error"):
        parts = texts.get(field)
        out[field] = render(parts, fallback=getattr(watch, field) or "")
        out[f"{field}_i18n"] = as_api(parts)
    return out


def guard_signal_api(spec: dict) -> dict[str, Any]:
    """A signal's `message` (why its state) and `threshold` worded, with their `_i18n`;
    `unit_label`: its unit in words (`unit` stays the catalogue's id)."""
    threshold = threshold_msg(spec)
    parts = spec.get("message_msg")
    return {
        "message": render(parts, fallback=spec.get("message") or ""),
        "message_i18n": as_api(parts),
        "threshold": str(threshold),
        "threshold_i18n": as_api(threshold.stored),
        "unit_label": unit_word(str(spec.get("unit") or "")),
    }


def guard_api(watch: GuardWatch) -> dict[str, Any]:
    """The watch's texts and its signals' (in the order of `watch.signals`)."""
    return {**guard_texts_api(watch), "signals": [guard_signal_api(s) for s in watch.signals]}
