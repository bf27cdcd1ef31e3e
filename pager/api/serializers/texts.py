"""Pager texts kept as English in a column without parts (a delivery's error, a contact
method's test outcome, an escalation's stop reason): the API words the ones the pager
wrote in the request's language and gives their ids (`<field>_i18n`, null for anything
else, shown as stored)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.texts import Msg, as_api, render
from console.texts.api import I18N_SCHEMA

Words = Callable[[str], "Msg | str | None"]


def _msg(words: Words, value: Any) -> Msg | None:
    found = words(value or "")
    return found if isinstance(found, Msg) else None


@extend_schema_field(OpenApiTypes.STR)
class WordedText(serializers.Field):
    """The column's text in the request's language (as stored when the pager did not
    write it)."""

    def __init__(self, words: Words, **kwargs: Any) -> None:
        self.words = words
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str:
        found = _msg(self.words, value)
        return render(found.stored, fallback=value or "") if found else (value or "")


@extend_schema_field(I18N_SCHEMA)
class WordedIds(serializers.Field):
    """The text's ids and parameters ([{"id", "params"}]); null when stored only as text."""

    def __init__(self, words: Words, **kwargs: Any) -> None:
        self.words = words
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> list[dict[str, Any]] | None:
        found = _msg(self.words, value)
        return as_api(found.stored) if found else None
