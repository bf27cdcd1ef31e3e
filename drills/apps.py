from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from drills import timeline_kinds
from incidents.drill_claims import drill_claim_register
from incidents.timeline_kinds import timeline_kinds_register
from runbooks.sections import runbook_section_register


class DrillsConfig(AppConfig):
    name = "drills"
    verbose_name = _("Drills")

    def ready(self) -> None:
        # registry: models load after apps are ready
        from drills import texts  # noqa: F401  # registry: the drills.* message ids
        from drills.claims import running_drills_claim
        from drills.receivers import on_timeline_appended
        from drills.views import runbook_drills_section
        from incidents.timeline_signal import timeline_appended

        # incidents and runbooks import no higher app: we tell them what we add, the
        # incident timeline's kind and the runbook page's drill section.
        timeline_kinds_register(app=self.name, kinds=timeline_kinds.LABELS)
        runbook_section_register(
            key="drills",
            order=10,
            template="drills/_last_passed.html",
            context=runbook_drills_section,
        )
        # Ingest asks whether a running drill claims an incident it opens, so the
        # incident opens as a drill (its first notification knows).
        drill_claim_register(key="drills", check=running_drills_claim)
        # A real SEV1 opening or reopening stops a running drill at once.
        timeline_appended.connect(on_timeline_appended, dispatch_uid="drills.real_sev1_stop")
