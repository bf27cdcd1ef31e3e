"""A reading's unit in the viewer's language (runbooks/units.py):
`{% load units %}{{ unit|unit_word }}` ("ratio" -> 比例, "" for a yes/no reading) and
`{{ value|reading:unit }}` (the number; a yes/no reading as 是/否)."""

from typing import Any

from django import template

from runbooks import units

register = template.Library()


@register.filter
def unit_word(unit: Any) -> str:
    return units.unit_word(str(unit or ""))


@register.filter
def reading(value: Any, unit: Any = "") -> str:
    return units.reading(value, str(unit or ""))
