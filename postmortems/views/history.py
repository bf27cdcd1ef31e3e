"""The edit history's rows as the page shows them: the field named in the reader's
language, and each value either worded (a status, included / left out, a refresh) or
shown as stored with the `lang` of the language it was written in."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.translation import gettext as _

from console.texts import msg, render
from postmortems.languages import document_foreign_language, foreign_language
from postmortems.models import TEXT_SECTIONS, PostmortemStatus

# What drafting/refresh writes (services/drafting): English, stored as text.
_REFRESHED = re.compile(r"^facts refreshed from incident #(\d+); (\d+) new timeline line\(s\)$")
_LINE = re.compile(r"^timeline:(\d+)(:included)?$")


@dataclass(frozen=True)
class Value:
    text: str
    lang: str | None = None  # set when shown as stored, in another language than the page


@dataclass(frozen=True)
class HistoryRow:
    edit: object
    field: str  # the field's words
    old: Value
    new: Value


def _words(key: str, **params) -> str:
    return render(msg(key, **params).stored)


def _status(value: str) -> Value:
    try:
        return Value(str(PostmortemStatus(value).label))
    except ValueError:
        return Value(value)


def _included(value: str) -> Value:
    if value in ("True", "False"):
        key = "postmortems.change.included" if value == "True" else "postmortems.change.left_out"
        return Value(_words(key))
    return Value(value)


def _refreshed(value: str) -> Value:
    found = _REFRESHED.match(value)
    if found is None:
        return Value(value, foreign_language("en"))
    lines = msg("postmortems.change.new_lines", count=int(found.group(2)))
    return Value(_words("postmortems.history.refreshed", id=int(found.group(1)), lines=lines))


def history_row(pm, edit) -> HistoryRow:
    field = edit.field
    doc = document_foreign_language(pm)
    if field in ("title", *TEXT_SECTIONS):
        return HistoryRow(edit, _words(f"postmortems.field.{field}"),
                          Value(edit.old, doc), Value(edit.new, doc))  # fmt: skip
    if line := _LINE.match(field):
        number = line.group(1)
        if line.group(2):
            label = _("Timeline line #%(id)s: included or left out") % {"id": number}
            return HistoryRow(edit, label, _included(edit.old), _included(edit.new))
        label = _("Timeline line #%(id)s") % {"id": number}
        return HistoryRow(edit, label, Value(edit.old, doc), Value(edit.new, doc))
    if field == "status":
        return HistoryRow(edit, _("Status"), _status(edit.old), _status(edit.new))
    if field == "action_item":
        # The item's title: a suggestion drafted in the document's language, or typed.
        return HistoryRow(edit, _("Action item added"), Value(edit.old), Value(edit.new, doc))
    if field == "refresh":
        return HistoryRow(
            edit, _("Refreshed from the incident"), Value(edit.old), _refreshed(edit.new)
        )
    if field == "approvals":
        # Old: who had approved (names). New: what the service wrote, in English.
        return HistoryRow(
            edit, _("Approvals withdrawn"), Value(edit.old), Value(edit.new, foreign_language("en"))
        )
    return HistoryRow(edit, field, Value(edit.old, doc), Value(edit.new, doc))


def history_rows(pm, edits) -> list[HistoryRow]:
    return [history_row(pm, e) for e in edits]
