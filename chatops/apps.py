from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChatopsConfig(AppConfig):
    name = "chatops"
    verbose_name = _("Chat")

    def ready(self) -> None:
        # registry: the incident page's chat panel (chatops/panel.py reads the models)
        from chatops.panel import panel_context
        from incidents.panels import incident_panel_register

        incident_panel_register(
            key="chatops", order=30, template="chatops/_incident_panel.html", context=panel_context
        )
        # registry: models load after apps are ready (receivers import services)
        from chatops import receivers

        receivers.connect()
