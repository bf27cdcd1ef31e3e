from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ActionsConfig(AppConfig):
    name = "actions"
    verbose_name = _("Actions")

    def ready(self) -> None:
        from celery.signals import worker_ready

        from actions.access import log_access_at_worker_start
        from console.liveness import waiting_work_register
        from incidents.panels import incident_panel_register

        worker_ready.connect(log_access_at_worker_start, weak=False)
        # console shows "no worker ... M action runs are waiting" but may not import us.
        waiting_work_register(
            count=_count_waiting_runs, singular=_("action run"), plural=_("action runs")
        )
        # incidents imports no higher app: we tell it our incident panel.
        incident_panel_register(key="actions", order=20, template="actions/_incident_section.html")


def _count_waiting_runs() -> int:
    from actions.models import ActionRun, ActionRunStatus

    return ActionRun.objects.filter(status=ActionRunStatus.QUEUED).count()
