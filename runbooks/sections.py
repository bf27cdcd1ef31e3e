"""Sections other apps add to a runbook's page, registered from their AppConfig.ready()
(console/page_sections.py says how a section is rendered). `{% runbook_sections runbook %}`
(runbooks/templatetags/runbook_sections.py) renders them in `order` (drills registers
when the runbook's drill last passed).
"""

from console.page_sections import PageSection, PageSections

SECTIONS = PageSections("runbook page section")
runbook_section_register = SECTIONS.register


def runbook_sections() -> list[PageSection]:
    return SECTIONS.ordered()
