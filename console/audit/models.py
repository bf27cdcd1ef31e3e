"""The sign-in audit log: who signed in, out, failed to, and whose role changed.

Written by console/audit/services.py (Django's login signals and group changes) and
console/oidc/backends.py (sign-in through the identity provider); read by the /audit/ page and
the Django admin, both read-only.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from console.append_only import AppendOnlyModel


class AuditKind(models.TextChoices):
    LOGIN = "login", _("Logged in")
    LOGOUT = "logout", _("Logged out")
    LOGIN_FAILED = "login_failed", _("Login failed")
    ROLE_CHANGED = "role_changed", _("Role changed")
    TOKEN_REVOKED = "token_revoked", _("API token revoked")
    # The pager's configuration by people (pager/): who is on call, how they are
    # reached, heartbeats and maintenance windows. Labels only: console knows no app.
    ONCALL_CHANGED = "oncall_changed", _("On-call schedule changed")
    CONTACT_METHOD = "contact_method", _("Contact method changed")
    PAGER_CONFIG = "pager_config", _("Pager setup changed")
    # What a person did from chat (chatops/), done or refused, and chat's setup.
    CHAT_ACTION = "chat_action", _("Chat action")
    CHAT_CONFIG = "chat_config", _("Chat setup changed")
    # Retention (incidents/archive/): rows leaving the hot tables, and coming back.
    ARCHIVED = "archived", _("Incidents archived")
    RESTORED = "restored", _("Incidents restored")


class AuditMethod(models.TextChoices):
    PASSWORD = "password", _("Password")
    OIDC = "oidc", _("Single sign-on")
    API_TOKEN = "api_token", _("API token request")
    SESSION = "session", _("Session")  # a logout, or a login made by code (tests, shell)
    GROUPS = "groups", _("Group membership")  # a role changed outside a sign-in (admin, shell)
    # Where an API token was revoked: the REST API, the Django admin, or an account change
    # (password, deactivation) that ends every token of the user.
    API = "api", _("REST API")
    ADMIN = "admin", _("Django admin")
    ACCOUNT = "account", _("Account change")
    PAGER = "pager", _("Pager")
    SLACK = "slack", _("Slack")
    MATTERMOST = "mattermost", _("Mattermost")
    RETENTION = "retention", _("Retention (scheduled)")
    COMMAND = "command", _("Management command")
    PAGE = "page", _("Web page")


class AuditEvent(AppendOnlyModel):
    """Append-only (console.append_only): the database refuses UPDATE and DELETE. So a
    user with audit rows cannot be deleted (PROTECT; SET_NULL would be an UPDATE):
    accounts are deactivated, as for the incident timeline."""

    at = models.DateTimeField(default=timezone.now, verbose_name=_("at"))
    kind = models.CharField(
        max_length=16, choices=AuditKind.choices, db_index=True, verbose_name=_("kind")
    )
    method = models.CharField(max_length=16, choices=AuditMethod.choices, verbose_name=_("method"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("user"),
    )
    # As typed or claimed at the time: set for a failed login of an unknown name too.
    username = models.CharField(
        max_length=150, blank=True, db_index=True, verbose_name=_("username")
    )
    ip = models.GenericIPAddressField(null=True, blank=True, verbose_name=_("IP address"))
    user_agent = models.CharField(max_length=512, blank=True, verbose_name=_("user agent"))
    # Why a login failed, in words an admin can act on.
    reason = models.CharField(max_length=500, blank=True, verbose_name=_("reason"))
    # Role changes: the role names before and after; sign-ins also keep the groups claimed.
    old = models.JSONField(null=True, blank=True, verbose_name=pgettext_lazy("audit event", "old"))
    new = models.JSONField(null=True, blank=True, verbose_name=pgettext_lazy("audit event", "new"))

    class Meta:
        verbose_name = _("audit event")
        verbose_name_plural = _("audit events")
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["-at", "-id"], name="console_audit_at_idx")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.kind} {self.username}"
