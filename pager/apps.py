from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from incidents.panels import incident_panel_register
from incidents.timeline_kinds import timeline_kinds_register
from pager import timeline_kinds


class PagerConfig(AppConfig):
    name = "pager"
    verbose_name = _("Pager")

    def ready(self) -> None:
        timeline_kinds_register(app=self.name, kinds=timeline_kinds.LABELS)
        # Owning team, who is on call, the escalation and its pages (pager/panel.py).
        incident_panel_register(key="pager", order=5, template="pager/_incident_panel.html")
        # registry: the pager's texts (console/texts/), "pager.<key>"
        # registry: timeline lines written before the core, in the viewer's language
        from incidents.timeline_text import timeline_text_register
        from pager import (
            audit_texts,  # noqa: F401  (registry: the audit log's reasons, /audit/)
            texts,  # noqa: F401
        )
        from pager.escalation.timeline import reword as escalation_reword

        for kind in timeline_kinds.LABELS:
            timeline_text_register(kind, escalation_reword)
        # registry: models load after apps are ready (receivers import services)
        from pager import receivers

        receivers.connect()
        import pager.demo  # noqa: F401 (registers the pager's part of seed_demo)
