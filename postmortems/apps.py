from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

# Model-free modules: importable while the app registry is still loading.
from incidents.panels import incident_panel_register
from incidents.timeline_kinds import timeline_kinds_register
from postmortems import timeline_kinds


class PostmortemsConfig(AppConfig):
    name = "postmortems"
    verbose_name = _("Postmortems")

    def ready(self) -> None:
        # incidents imports no higher app: we tell it our timeline kinds and incident panel.
        timeline_kinds_register(app=self.name, kinds=timeline_kinds.LABELS)
        incident_panel_register(
            key="postmortem", order=40, template="postmortems/_incident_section.html"
        )
        # Right after the runbook: "seen before, and the fix is not done" belongs near the
        # top, before anyone reaches for an action.
        incident_panel_register(
            key="similar", order=15, template="postmortems/_similar_section.html"
        )
        # registry: models load after apps are ready. The demo history (seed_demo).
        from incidents.demo import demo_part_register
        from postmortems.demo import PART

        demo_part_register(PART)
        # registry: the message templates register themselves on import (console/texts)
        from postmortems import texts  # noqa: F401

        # registry: the demo history's own ids (postmortems.demo.in_place), so its rows
        # are worded even when seed_demo has not run in this process
        from postmortems.demo import texts as demo_texts  # noqa: F401

        # registry: why an incident is similar (postmortems.similar.*)
        from postmortems.similar import texts as similar_texts  # noqa: F401
