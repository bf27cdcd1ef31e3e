from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class IncidentsConfig(AppConfig):
    name = "incidents"
    verbose_name = _("Incidents")

    def ready(self) -> None:
        # registry: models load after apps are ready
        from incidents.models import TimelineEventType
        from incidents.panels import incident_panel_register
        from incidents.silences.views import panel_context
        from incidents.timeline_kinds import timeline_kinds_register

        timeline_kinds_register(app=self.name, kinds=TimelineEventType.choices)
        # Between the runbook's actions (20) and its signals (30): what a responder
        # reaches for once the fix is under way and the pages keep coming.
        incident_panel_register(
            key="silences",
            order=25,
            template="incidents/_silences_section.html",
            context=panel_context,
        )
