from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


def _timeline_appended(sender: object, events: list, **kwargs: object) -> None:
    # registry: models load after apps are ready (this module is imported before them)
    from notifications.services import timeline_events_notify

    timeline_events_notify(events=events)


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = _("Notifications")

    def ready(self) -> None:
        # incidents sends this after each commit that appended timeline events; it knows
        # nothing of this app (nothing imports notifications).
        # registry: models load after apps are ready
        from incidents.timeline_signal import timeline_appended

        timeline_appended.connect(_timeline_appended, dispatch_uid="notifications.timeline")
        # registry: the deploy check and the message templates (console/texts) register
        # themselves on import
        from notifications import checks, texts  # noqa: F401
        from notifications.services import errors  # noqa: F401
