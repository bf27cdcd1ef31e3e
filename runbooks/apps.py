from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from incidents.panels import incident_panel_register
from incidents.timeline_kinds import timeline_kinds_register
from runbooks import timeline_kinds


class RunbooksConfig(AppConfig):
    name = "runbooks"
    verbose_name = _("Runbooks")

    def ready(self) -> None:
        # registry: models load after apps are ready
        from incidents.related.precedence import lead_precedence_register
        from incidents.timeline_signal import timeline_appended
        from runbooks import (
            checks,  # noqa: F401  (registers the catalogue's system check)
            tasks,  # noqa: F401  (auto-triage's queue sends its drain by name)
            texts,  # noqa: F401  (registry: the timeline's message ids)
            timeline_text,
        )
        from runbooks.auto_triage.queue import on_timeline_appended
        from runbooks.catalog import runbook_leads_over

        # incidents imports no higher app: we tell it our timeline kinds (and their
        # console-written lines, worded again in the viewer's language) and our panels.
        timeline_kinds_register(app=self.name, kinds=timeline_kinds.LABELS)
        timeline_text.register()
        for key, order, template in (
            ("runbook", 10, "runbooks/_incident_triage_section.html"),
            ("signals", 30, "runbooks/_incident_signals_section.html"),
        ):
            incident_panel_register(key=key, order=order, template=template)
        # Auto-triage: incidents tells whoever listens what it appended, after the commit.
        timeline_appended.connect(on_timeline_appended, dispatch_uid="runbooks.auto_triage")
        # Related incidents: which runbook leads over which (`leads_over:`).
        lead_precedence_register(runbook_leads_over)
