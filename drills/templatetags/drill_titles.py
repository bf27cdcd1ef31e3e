"""`{{ plan|plan_title }}`: a drill plan's title in the reader's language (drills/titles.py)."""

from django import template

from drills.titles import plan_title as _plan_title

register = template.Library()


@register.filter
def plan_title(plan) -> str:
    return _plan_title(plan)
