"""`{% runbook_sections runbook %}`: the sections other apps registered for a runbook's
page (runbooks.sections), rendered in order."""

from django import template
from django.utils.safestring import mark_safe

from runbooks.sections import runbook_sections as registered_sections

register = template.Library()


@register.simple_tag(takes_context=True)
def runbook_sections(context, runbook) -> str:
    request = context.get("request")
    engine = context.template.engine
    parts = []
    for section in registered_sections():
        extra = section.context(request, runbook) if section.context is not None else {}
        # Like {% include %}: the page's context (request, perms) plus the section's own.
        with context.push(runbook=runbook, **extra):
            parts.append(engine.get_template(section.template).render(context))
    # Each part is a rendered template, autoescaped by the template engine.
    return mark_safe("".join(parts))  # noqa: S308
