from django.apps import AppConfig


class PostmortemsConfig(AppConfig):
    name = "postmortems"
    verbose_name = "Postmortems"

    def ready(self) -> None:
        # incidents imports no higher app: we tell it our timeline kinds and incident panel.
        from incidents.panels import incident_panel_register
        from incidents.timeline_kinds import timeline_kinds_register
        from postmortems import timeline_kinds

        timeline_kinds_register(app=self.name, kinds=timeline_kinds.LABELS)
        incident_panel_register(
            key="postmortem", order=40, template="postmortems/_incident_section.html"
        )
