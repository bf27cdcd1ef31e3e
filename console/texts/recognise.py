"""Words for texts stored only as English, in columns that have no room for parts (an
audit reason, a revision's reason, an error cached as a string): the stored English is
matched back against the template it was written from, and the parameters it held are
worded again in the reader's language. A text that matches no template is shown as
stored."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from django.utils import translation

from console.texts.catalogue import template_for
from console.texts.message import Msg, msg, render

_PARAM = re.compile(r"%\((\w+)\)s")


@cache
def english_pattern(template: str) -> re.Pattern[str]:
    """The English template as a pattern: each %(name)s a group (a name used twice must
    hold the same text twice), %% a literal %."""
    out, seen, last = [], set(), 0
    for found in _PARAM.finditer(template):
        out.append(re.escape(template[last : found.start()].replace("%%", "%")))
        name = found.group(1)
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        last = found.end()
    out.append(re.escape(template[last:].replace("%%", "%")))
    return re.compile("".join(out), re.S)


def recognise(text: str, keys: Iterable[str]) -> Msg | None:
    """The message `text` was written from, among the registered ids `keys` (tried in
    order: a specific shape before a general one); None for any other text."""
    for key in keys:
        with translation.override("en"):
            english = str(template_for(key))
        found = english_pattern(english).fullmatch(text or "")
        if found is not None:
            return msg(key, **found.groupdict())
    return None


def reworded(text: str, keys: Iterable[str]) -> str:
    """`text` in the active language when it has a known shape, else as stored."""
    said = recognise(text, keys)
    return render(said.stored, fallback=text) if said is not None else (text or "")
