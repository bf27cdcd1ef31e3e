from django.apps import AppConfig
from django.apps import apps as global_apps
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _

from console import (
    encryption,  # noqa: F401  (registers the deploy check on its keys)
    migration_history,  # noqa: F401  (refuses a database too old to upgrade)
)


def _sync_roles(sender, **kwargs) -> None:
    # registry: models load after apps are ready
    from console.roles import roles_sync

    roles_sync()


def _sync_service_accounts(sender, apps=None, **kwargs) -> None:
    # registry: models load after apps are ready
    from console.service_accounts import service_accounts_ensure

    try:
        (apps or global_apps).get_model("console", "UsernameKey")
    except LookupError:
        return  # console not migrated yet: the next full migrate makes them
    service_accounts_ensure()


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = _("Console")

    def ready(self) -> None:
        # registry: models load after apps are ready
        from console.api_tokens import revocation as api_token_revocation
        from console.audit import services as audit
        from console.preferences import services as preferences
        from console.usernames import keys as usernames

        # Groups follow the code after every migrate (and after test-database flushes).
        # Run for every app's signal: it is idempotent and the app order must not matter.
        post_migrate.connect(_sync_roles, dispatch_uid="console.sync_roles")
        # The service accounts too (console/service_accounts.py), so a test flush or a
        # deleted account is mended by the next migrate, never by the code acting as one.
        post_migrate.connect(_sync_service_accounts, dispatch_uid="console.service_accounts")
        # Logins, logouts, failed logins and role changes go to the audit log.
        audit.connect()
        # A user's saved language and time preference follow them into each new session.
        preferences.connect()
        # Usernames keep a unique look-alike key (console/usernames/keys.py).
        usernames.connect()
        # A changed password, a deactivation or a lost role ends the user's API tokens.
        api_token_revocation.connect()
