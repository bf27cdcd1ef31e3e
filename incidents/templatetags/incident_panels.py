"""`{% incident_panels incident %}`: the panels other apps registered for the incident page
(incidents.panels), rendered in order."""

from django import template
from django.utils.safestring import mark_safe

from incidents.panels import incident_panels as registered_panels

register = template.Library()


@register.simple_tag(takes_context=True)
def incident_panels(context, incident) -> str:
    request = context.get("request")
    engine = context.template.engine
    parts = []
    for panel in registered_panels():
        extra = panel.context(request, incident) if panel.context is not None else {}
        # Like {% include %}: the page's context (request, perms, live_refresh_seconds,
        # csrf_token) plus the panel's own, without running the context processors again.
        with context.push(incident=incident, **extra):
            parts.append(engine.get_template(panel.template).render(context))
    # Each part is a rendered template, autoescaped by the template engine.
    return mark_safe("".join(parts))  # noqa: S308
