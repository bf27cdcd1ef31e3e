from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from drills import timeline_kinds
from incidents.timeline_kinds import timeline_kinds_register
from runbooks.sections import runbook_section_register


class DrillsConfig(AppConfig):
    name = "drills"
    verbose_name = _("Drills")

    def ready(self) -> None:
        # registry: models load after apps are ready
        from drills.views import runbook_drills_section

        # incidents and runbooks import no higher app: we tell them what we add, the
        # incident timeline's kind and the runbook page's drill section.
        timeline_kinds_register(app=self.name, kinds=timeline_kinds.LABELS)
        runbook_section_register(
            key="drills",
            order=10,
            template="drills/_last_passed.html",
            context=runbook_drills_section,
        )
