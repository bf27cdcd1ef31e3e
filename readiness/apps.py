from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReadinessConfig(AppConfig):
    name = "readiness"
    verbose_name = _("Pre-launch checklist")

    def ready(self) -> None:
        # registry: the checklist's message ids (console/texts/)
        # registry: beat's start queues the first discovery (readiness/startup.py)
        from readiness import (
            startup,
            texts,  # noqa: F401
        )

        startup.connect()
