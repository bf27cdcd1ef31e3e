"""Stored texts in the viewer's language.

`{{ run|text:"approval_reason" }}`: a row's field, from `texts[field]` (or an event's
`payload["msg"]` for "message"), as stored when it has no parts.
`{{ plan.summary_msg|msg:plan.summary }}`: parts kept inside a JSON value, with the
stored text as the fallback."""

from typing import Any

from django import template

from console.texts import render
from console.texts.api import stored_parts

register = template.Library()


@register.filter
def text(obj: Any, field: str) -> str:
    return render(stored_parts(obj, field), fallback=getattr(obj, field, "") or "")


@register.filter
def msg(parts: Any, fallback: Any = "") -> str:
    return render(parts, fallback="" if fallback is None else str(fallback))
