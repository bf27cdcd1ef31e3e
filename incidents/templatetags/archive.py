"""The archived incident's banner (templates/incidents/_archived_banner.html):
`{% incident_archive incident as archive %}` reads where its alerts and timeline went.
The banner asks only when `incident.archived_at` is set, so an incident that was never
archived costs no query."""

from django import template

from incidents.archive.selectors import archive_of
from incidents.models import Incident, IncidentArchive

register = template.Library()


@register.simple_tag
def incident_archive(incident: Incident) -> IncidentArchive | None:
    if incident.archived_at is None:
        return None
    return archive_of(incident.pk)
