"""What Alertmanager last said about an incident's alerts, on its page:
`{% alertmanager_says incident %}` (above the alerts: when it was last asked, or that it
could not be) and `{% alertmanager_ending_note incident_id %}` (the mitigate/resolve
confirmation: "Alertmanager still sees it firing" only when it does)."""

from typing import Any

from django import template

from incidents.alertmanager_view.selectors import incident_alertmanager_says, incident_page_says
from incidents.models import Incident

register = template.Library()


@register.inclusion_tag("incidents/_alertmanager_says.html")
def alertmanager_says(incident: Incident) -> dict[str, Any]:
    return {"says": incident_page_says(incident)}


@register.inclusion_tag("incidents/_alertmanager_ending_note.html")
def alertmanager_ending_note(incident_id: int) -> dict[str, Any]:
    return {"says": incident_alertmanager_says(incident_id=incident_id)}
