"""Timeline event kinds and their labels, by the app that writes them.

incidents registers its own kinds (`TimelineEventType` in incidents.models); every other
app registers the kinds it writes from its `AppConfig.ready()`. The column holds a plain
string (no database choices), so a new kind in another app needs no incidents migration;
`incident_event_record` refuses a kind nobody registered. Labels for pages, the admin and
its filters come from here.

Stored values never change: a kind is the data, its label is only how it is shown.
Labels may be lazy (gettext_lazy): they are kept lazy and turned into text when shown,
so each page gets them in its own language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from django.utils.functional import Promise

KIND_RE = re.compile(r"[a-z][a-z0-9_]{0,31}")  # fits TimelineEvent.kind (32 characters)


@dataclass(frozen=True)
class TimelineKind:
    value: str
    label: str | Promise  # lazy labels are translated when shown
    app: str


_KINDS: dict[str, TimelineKind] = {}


def timeline_kinds_register(
    *, app: str, kinds: Mapping[str, str | Promise] | Iterable[tuple[str, str | Promise]]
) -> None:
    """Register `kinds` (value -> label) as written by `app`. Registering the same kind
    again with the same owner and label is a no-op; another owner is a configuration
    error (two apps would be writing one kind with two meanings)."""
    for value, label in dict(kinds).items():
        if not KIND_RE.fullmatch(value):
            raise ImproperlyConfigured(
                f"{app}: timeline kind {value!r} must be lowercase letters, digits and "
                "underscores, starting with a letter, at most 32 characters."
            )
        known = _KINDS.get(value)
        if known is not None and (known.app, str(known.label)) != (app, str(label)):
            raise ImproperlyConfigured(
                f"{app}: timeline kind {value!r} is already registered by {known.app} "
                f"as {str(known.label)!r}."
            )
        _KINDS[value] = TimelineKind(value=value, label=label, app=app)


def timeline_kind_known(value: str) -> bool:
    return value in _KINDS


def timeline_kind_label(value: str) -> str:
    """The registered label; for a stored kind no app registers any more, the value
    itself made readable, so old rows still show."""
    kind = _KINDS.get(value)
    return str(kind.label) if kind is not None else value.replace("_", " ").capitalize()


def timeline_kind_choices() -> list[tuple[str, str]]:
    """(value, label) pairs sorted by label, for filters and forms."""
    choices = [(k.value, str(k.label)) for k in _KINDS.values()]
    return sorted(choices, key=lambda c: c[1].lower())
