from django.apps import AppConfig


class RunbooksConfig(AppConfig):
    name = "runbooks"
    verbose_name = "Runbooks"

    def ready(self) -> None:
        from runbooks import checks  # noqa: F401  (registers the catalogue system check)
