"""`{% runbook_sections runbook %}`: the sections other apps registered for a runbook's
page (runbooks.sections), rendered in order."""

from django import template
from django.template import Context
from django.utils.safestring import SafeString

from runbooks.schema import Runbook
from runbooks.sections import SECTIONS

register = template.Library()


@register.simple_tag(takes_context=True)
def runbook_sections(context: Context, runbook: Runbook) -> SafeString:
    return SECTIONS.render(context, runbook=runbook)
