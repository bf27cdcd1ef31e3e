"""The sign-in audit log and the single sign-on links in the Django admin, read-only:
rows are written by sign-ins only (console/audit/services.py, console/oidc/services.py)."""

from django.contrib import admin
from django.http import HttpRequest

from console.audit.models import AuditEvent
from console.oidc.models import OidcIdentity


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(_ReadOnly):
    list_display = ("at", "kind", "method", "username", "ip", "reason", "old", "new")
    list_filter = ("kind", "method")
    search_fields = ("username", "ip", "reason")
    date_hierarchy = "at"
    readonly_fields = (*list_display, "user", "user_agent")


@admin.register(OidcIdentity)
class OidcIdentityAdmin(_ReadOnly):
    list_display = ("user", "subject", "issuer", "created_at")
    search_fields = ("user__username", "subject")
    list_select_related = ("user",)
    readonly_fields = list_display
