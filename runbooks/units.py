"""A reading's unit in the reader's language.

The catalogue writes a unit as an id (`unit: ratio`, `count`, `bool`, `revisions`; the
guard's built-in restart signal `of groups`). A page, a timeline line or a guard text
shows it next to a number: `unit_word(unit)` words it, `unit_msg(unit)` is the same as a
nested message (console/texts/) for a text stored as parts, and `reading(value, unit)`
is the number itself (a yes/no reading, `bool`, reads 是/否 rather than 1/0). Symbols (s,
ms, %, req/s, tokens/s, 1/s) and a unit of no known id are shown as they are.
"""

from __future__ import annotations

import math
from typing import Any

from django.utils.translation import pgettext, pgettext_lazy

from console.texts import Msg, msg, render, texts_register

BOOL = "bool"
# unit id -> message id (the template is the unit's English, so English pages are unchanged).
_IDS = {
    "ratio": "runbooks.unit.ratio",
    "count": "runbooks.unit.count",
    "revisions": "runbooks.unit.revisions",
    "pods": "runbooks.unit.pods",
    "tokens": "runbooks.unit.tokens",
    "GPUs": "runbooks.unit.gpus",
    "code": "runbooks.unit.code",
    "of groups": "runbooks.unit.of_groups",
    "% of groups": "runbooks.unit.share_of_groups",  # a guard watch stored before "of groups"
}
texts_register(
    {
        "runbooks.unit.ratio": pgettext_lazy("unit of a reading", "ratio"),
        "runbooks.unit.count": pgettext_lazy("unit of a reading", "count"),
        "runbooks.unit.revisions": pgettext_lazy("unit of a reading", "revisions"),
        "runbooks.unit.pods": pgettext_lazy("unit of a reading", "pods"),
        "runbooks.unit.tokens": pgettext_lazy("unit of a reading", "tokens"),
        "runbooks.unit.gpus": pgettext_lazy("unit of a reading", "GPUs"),
        "runbooks.unit.code": pgettext_lazy("unit of a reading", "code"),
        "runbooks.unit.of_groups": pgettext_lazy("unit of a reading", "of groups"),
        # A template is formatted, so its literal % is written %%.
        "runbooks.unit.share_of_groups": pgettext_lazy("unit of a reading", "%% of groups"),
    }
)


def unit_msg(unit: str) -> Msg | str:
    """The unit as a parameter of a stored text: a nested message for a unit id, the
    symbol as it is otherwise; "" for `bool` (its value says yes or no)."""
    if unit == BOOL:
        return ""
    key = _IDS.get(unit or "")
    return msg(key) if key else (unit or "")


def unit_word(unit: str) -> str:
    """The unit in the active language, "" for `bool`."""
    said = unit_msg(unit)
    return render(said.stored, fallback=unit) if isinstance(said, Msg) else said


def reading(value: Any, unit: str = "", spec: str = ".4g") -> str:
    """A number as shown beside its unit: a yes/no reading as 是/否 (in the active
    language), any other number formatted with `spec`; "" for no number."""
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, int | float) or (isinstance(value, float) and math.isnan(value)):
        return ""
    if unit == BOOL and value in (0, 1):
        return pgettext("a yes/no reading", "yes") if value else pgettext("a yes/no reading", "no")
    return format(value, spec)


def with_unit(value: Any, unit: str, spec: str = ".4g") -> str:
    """ "0.0007355 比例", "是", "12 s": a reading and its unit word, for plain text."""
    shown, word = reading(value, unit, spec), unit_word(unit)
    return f"{shown} {word}" if shown and word else shown
