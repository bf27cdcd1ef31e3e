"""The guard's texts as parts (console/texts/): the pieces every guard module words with
(a list, a number, a threshold, a reading, a signal's title, the split's phrases), and
the stored parts turned back into a `Msg` to nest in a longer text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from django.utils.functional import Promise

from actions.guard import texts  # noqa: F401  (registers the "guard.*" ids)
from console.texts import Msg, msg, texts_register
from runbooks.units import unit_msg

PODS = "pods"  # judge.PODS (judge imports this module)


class _SignalTitle(Promise):
    """A runbook signal's title in the reader's language, from the runbook catalogue's
    translation (runbooks/catalog/<language>/); the stored English title when the runbook
    or the signal is gone. A template that looks its words up when it is formatted."""

    def __mod__(self, values: dict[str, Any]) -> str:
        title = str(values.get("title") or "")
        try:
            from runbooks.catalog import load_catalog  # the catalogue loads on first use

            runbook = load_catalog().get(str(values.get("runbook") or ""))
        except Exception:  # a catalogue that does not load still shows the stored title
            return title
        guard = runbook.guard if runbook is not None else None
        found = [g.title for g in (guard.signals if guard else ()) if g.id == values.get("signal")]
        return found[0] if found else title

    def __str__(self) -> str:
        return "%(title)s"


texts_register({"guard.signal.title": _SignalTitle()})  # type: ignore[call-arg]


def stored_msg(parts: Any, fallback: str = "") -> Msg:
    """Stored parts as a Msg to nest; a text stored before it had parts, as it was."""
    if isinstance(parts, list) and parts:
        return Msg(tuple((str(key), dict(params or {})) for key, params in parts))
    return msg("guard.as_stored", text=fallback)


def as_msg(text: Msg | str) -> Msg:
    """A reading's error as a Msg: words the guard wrote, or Prometheus' own (raw)."""
    if isinstance(text, Msg):
        return text
    return msg("guard.error.prometheus", detail=str(text))


def listed(items: Sequence[Msg]) -> Msg:
    """Texts one after another, separated by semicolons in the reader's language."""
    if not items:
        return msg("guard.as_stored", text="")
    out = items[-1]
    for item in reversed(items[:-1]):
        out = msg("guard.list", first=item, rest=out)
    return out


def num(value: float | None) -> str | Msg:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return msg("guard.no_data")
    return f"{value:.4g}"


def title(spec: dict) -> str | Msg:
    """A signal's title in the reader's language: the built-in restart signal's from the
    catalogue of messages, a runbook signal's from the runbook's translation (a spec
    stored before it named its runbook keeps its English title)."""
    if spec.get("builtin"):
        return msg("guard.pods.title")
    if spec.get("runbook"):
        return msg(
            "guard.signal.title", runbook=spec["runbook"], signal=spec["id"], title=spec["title"]
        )
    return str(spec["title"])


def phrase(split: dict | None, key: str, default: str) -> str | Msg:
    """The split's `what`/`others`: its parts (`what_msg`) when the kind stored them,
    else its words (actions.kinds GuardSplit); `default` (an id) when there is none."""
    split = split or {}
    parts = split.get(f"{key}_msg")
    if isinstance(parts, list) and parts:
        return stored_msg(parts)
    if split.get(key):
        return str(split[key])
    return msg(default)


def threshold_msg(spec: dict) -> Msg:
    if spec["type"] == PODS:
        return msg("guard.threshold.pods")
    if spec["type"] == "availability":
        return msg(
            "guard.threshold.availability",
            burn=f"{spec['max_burn']:g}",
            slo=f"{spec['slo']:.2%}",
        )
    if spec["type"] == "latency":
        ratio = f"{spec['max_ratio']:g}"
        if spec["min_value"]:
            return msg(
                "guard.threshold.latency_floor",
                ratio=ratio,
                floor=f"{spec['min_value']:g}",
                unit=unit_msg(spec["unit"]),
            )
        return msg("guard.threshold.latency", ratio=ratio)
    return msg(
        "guard.threshold.quality", comparator=spec["comparator"], threshold=f"{spec['threshold']:g}"
    )


def shown_msg(spec: dict, value: float) -> Msg:
    if spec["type"] == "availability":
        return msg(
            "guard.shown.availability",
            burn=f"{value / (1 - spec['slo']):.3g}",
            ratio=f"{value:.2%}",
        )
    if spec["type"] == PODS:
        return msg("guard.shown.pods", share=f"{value:.0%}")
    return msg("guard.shown.value", value=num(value), unit=unit_msg(spec["unit"]))


def trail(readings: Sequence[float | None], sep: str) -> str:
    """Readings one after another (numbers only; a missing one reads "-")."""
    return sep.join("-" if r is None else f"{r:.4g}" for r in readings)


def with_message(spec: dict, message: Msg) -> dict:
    """A signal's `message` in English and its parts beside it (`message_msg`)."""
    spec.update(message=message.english, message_msg=message.stored)
    return spec
