from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RunbooksConfig(AppConfig):
    name = "runbooks"
    verbose_name = _("Runbooks")

    def ready(self) -> None:
        from runbooks import checks  # noqa: F401  (registers the catalogue system check)

        _extend_the_incident_page()
        _triage_incidents_as_they_open()


def _extend_the_incident_page() -> None:
    # incidents imports no higher app: we tell it our timeline kinds and incident panels.
    from incidents.panels import incident_panel_register
    from incidents.timeline_kinds import timeline_kinds_register
    from runbooks import timeline_kinds

    timeline_kinds_register(app="runbooks", kinds=timeline_kinds.LABELS)
    # Its console-written lines, worded again in the viewer's language.
    from runbooks import timeline_text

    timeline_text.register()
    for key, order, template in (
        ("runbook", 10, "runbooks/_incident_triage_section.html"),
        ("signals", 30, "runbooks/_incident_signals_section.html"),
    ):
        incident_panel_register(key=key, order=order, template=template)


def _triage_incidents_as_they_open() -> None:
    # incidents tells whoever listens what it appended, after the commit.
    from incidents.services.timeline import timeline_appended
    from runbooks.auto_triage.queue import on_timeline_appended

    timeline_appended.connect(on_timeline_appended, dispatch_uid="runbooks.auto_triage.evaluation")
