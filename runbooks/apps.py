from django.apps import AppConfig


class RunbooksConfig(AppConfig):
    name = "runbooks"
    verbose_name = "Runbooks"

    def ready(self) -> None:
        from celery.signals import worker_ready

        from runbooks import checks  # noqa: F401  (registers the catalogue system check)
        from runbooks.actions.access import log_access_at_worker_start

        worker_ready.connect(log_access_at_worker_start, weak=False)
