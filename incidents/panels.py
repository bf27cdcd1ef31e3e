"""Panels other apps add to the incident page, registered from their AppConfig.ready()
(console/page_sections.py says how a section is rendered). `{% incident_panels incident %}`
(incidents/templatetags/incident_panels.py) renders them in `order`. A panel that loads
itself over htmx builds its URL with `{% url %}` in its own template.
"""

from console.page_sections import PageSection, PageSections

PANELS = PageSections("incident panel")
incident_panel_register = PANELS.register


def incident_panels() -> list[PageSection]:
    return PANELS.ordered()
