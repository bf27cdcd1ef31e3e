from django.apps import AppConfig


class IncidentsConfig(AppConfig):
    name = "incidents"
    verbose_name = "Incidents"

    def ready(self) -> None:
        from incidents.models import TimelineEventType
        from incidents.timeline_kinds import timeline_kinds_register

        timeline_kinds_register(app=self.name, kinds=TimelineEventType.choices)
