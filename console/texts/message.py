"""`Msg`: a text as parts, [[id, params], ...], joined by a space when worded. A
parameter is a scalar (shown as given: names, numbers, label values), a nested `Msg`
(a phrase of its own, worded in the same language; stored as its parts), or a moment
(`at(dt)`, shown in the viewer's time zone)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.utils import formats, timezone, translation
from django.utils.functional import Promise
from django.utils.translation import gettext

from console.texts.catalogue import template_for

# What is stored: a list of [id, params] pairs (JSON).
StoredParts = list[list[Any]]
_TIME = "$time"
_FULL_WIDTH_ENDS = frozenset("。！？；：，、）」』】")
_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Msg:
    parts: tuple[tuple[str, dict[str, Any]], ...]

    def __add__(self, other: Msg) -> Msg:
        return Msg(self.parts + other.parts)

    @property
    def stored(self) -> StoredParts:
        return [[key, dict(params)] for key, params in self.parts]

    @property
    def english(self) -> str:
        return english(self.stored)

    def __str__(self) -> str:  # the active language
        return render(self.stored)


def at(moment: datetime) -> dict[str, str]:
    """A moment as a parameter: stored in UTC, shown in the reader's zone."""
    return {_TIME: moment.astimezone(UTC).isoformat()}


def _param(name: str, value: Any) -> Any:
    if isinstance(value, Msg):
        return value.stored
    if isinstance(value, Promise):
        raise TypeError(f"parameter {name!r} is a lazy string: pass a nested msg() instead")
    if isinstance(value, dict) and set(value) == {_TIME}:
        return value
    if not isinstance(value, _SCALARS):
        raise TypeError(f"parameter {name!r} must be a scalar, a Msg or at(): {value!r}")
    return value


def msg(key: str, **params: Any) -> Msg:
    """One sentence or phrase; the id must be registered (a typo fails where it is
    written, not where it is read)."""
    template_for(key)
    return Msg(((key, {name: _param(name, value) for name, value in params.items()}),))


def join(messages: Iterable[Msg]) -> Msg:
    parts: tuple[tuple[str, dict[str, Any]], ...] = ()
    for message in messages:
        parts += message.parts
    return Msg(parts)


def _value(value: Any) -> Any:
    if isinstance(value, list):
        return _render(value)
    if isinstance(value, dict) and _TIME in value:
        moment = timezone.localtime(datetime.fromisoformat(value[_TIME]))
        return f"{formats.time_format(moment, 'H:i')} {moment.tzname() or ''}".strip()
    return value


def _render(stored: StoredParts) -> str:
    out = []
    for key, params in stored:
        template = template_for(key)
        values = {name: _value(value) for name, value in (params or {}).items()}
        # Always formatted, so a lost parameter fails here (a literal % is written %%).
        if isinstance(template, Promise):
            out.append(str(template % values))
        else:
            out.append(gettext(template) % values)
    return _joined(out)


def _joined(sentences: list[str]) -> str:
    """Sentences joined as the language writes them: a space after Latin text, none after
    a full-width mark (Chinese puts no space after 。 or ：)."""
    text = ""
    for sentence in sentences:
        if text and sentence:
            text += "" if text[-1] in _FULL_WIDTH_ENDS else " "
        text += sentence
    return text


def render(stored: Any, *, fallback: str = "", language: str | None = None) -> str:
    """The parts worded in `language` (default: the active one); `fallback` (what was
    stored as text) when there are no parts or they no longer render (an id this version
    does not know, a parameter it lost)."""
    if not stored or not isinstance(stored, list):
        return fallback
    try:
        if language is None:
            return _render(stored)
        with translation.override(language):
            return _render(stored)
    except (KeyError, TypeError, ValueError, IndexError):
        return fallback


def english(stored: StoredParts) -> str:
    with translation.override("en"):
        return _render(stored)


def as_api(stored: Any) -> list[dict[str, Any]] | None:
    """The parts for a client that words them itself: [{"id", "params"}], a nested
    phrase in the same shape; None when the text was stored only as text."""
    if not stored or not isinstance(stored, list):
        return None
    out = []
    for key, params in stored:
        out.append(
            {
                "id": key,
                "params": {
                    name: as_api(value) if isinstance(value, list) else value
                    for name, value in (params or {}).items()
                },
            }
        )
    return out
