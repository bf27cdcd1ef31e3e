from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class IncidentsConfig(AppConfig):
    name = "incidents"
    verbose_name = _("Incidents")

    def ready(self) -> None:
        # registry: models load after apps are ready
        from django.db.models.signals import post_save

        from incidents import texts  # noqa: F401  (registry: the timeline's message ids)
        from incidents.archive import checks  # noqa: F401 (registers the retention check)
        from incidents.models import Incident, TimelineEventType
        from incidents.panels import incident_panel_register
        from incidents.related import receivers
        from incidents.related import timeline as related_timeline
        from incidents.silences.views import panel_context
        from incidents.timeline_kinds import timeline_kinds_register
        from incidents.timeline_signal import timeline_appended

        timeline_kinds_register(app=self.name, kinds=TimelineEventType.choices)
        # Between the runbook's actions (20) and its signals (30): what a responder
        # reaches for once the fix is under way and the pages keep coming.
        incident_panel_register(
            key="silences",
            order=25,
            template="incidents/_silences_section.html",
            context=panel_context,
        )
        # Related incidents: first beside the timeline ("Part of #N" says where to work),
        # linked once an opening commits, unlinked from real ones when marked a drill.
        timeline_kinds_register(app=self.name, kinds=related_timeline.LABELS)
        incident_panel_register(key="related", order=5, template="incidents/_related_section.html")
        timeline_appended.connect(receivers.on_timeline_appended, dispatch_uid="incidents.related")
        post_save.connect(
            receivers.on_incident_saved, sender=Incident, dispatch_uid="incidents.related.kinds"
        )
