from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


def _sync_roles(sender, **kwargs) -> None:
    from console.roles import roles_sync

    roles_sync()


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = _("Console")

    def ready(self) -> None:
        # Groups follow the code after every migrate (and after test-database flushes).
        # Run for every app's signal: it is idempotent and the app order must not matter.
        post_migrate.connect(_sync_roles, dispatch_uid="console.sync_roles")
        # Logins, logouts, failed logins and role changes go to the audit log.
        from console import audit, preferences

        audit.connect()
        # A user's saved language and time preference follow them into each new session.
        preferences.connect()
