from django.apps import AppConfig


class RunbooksConfig(AppConfig):
    name = "runbooks"
    verbose_name = "Runbooks"

    def ready(self) -> None:
        from celery.signals import worker_ready

        from runbooks import checks  # noqa: F401  (registers the catalogue system check)
        from runbooks.actions.access import log_access_at_worker_start

        worker_ready.connect(log_access_at_worker_start, weak=False)
        _count_waiting_runs_for_the_worker_banner()
        _extend_the_incident_page()


def _extend_the_incident_page() -> None:
    # incidents imports no higher app: we tell it our timeline kinds.
    from incidents.timeline_kinds import timeline_kinds_register
    from runbooks import timeline_kinds

    timeline_kinds_register(app="runbooks", kinds=timeline_kinds.LABELS)


def _count_waiting_runs() -> int:
    from runbooks.actions.models import ActionRun, ActionRunStatus

    return ActionRun.objects.filter(status=ActionRunStatus.QUEUED).count()


def _count_waiting_runs_for_the_worker_banner() -> None:
    # console shows "no worker ... M action runs are waiting" but may not import us.
    from console.liveness import waiting_work_register

    waiting_work_register(count=_count_waiting_runs, singular="action run", plural="action runs")
