"""`{% incident_panels incident %}`: the panels other apps registered for the incident page
(incidents.panels), rendered in order."""

from django import template
from django.template import Context
from django.utils.safestring import SafeString

from incidents.models import Incident
from incidents.panels import PANELS

register = template.Library()


@register.simple_tag(takes_context=True)
def incident_panels(context: Context, incident: Incident) -> SafeString:
    return PANELS.render(context, incident=incident)
