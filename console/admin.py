"""Worker heartbeats, read-only: the workers write them (console/liveness/heartbeat.py).
Django autodiscovers this module only, so it also loads the sub-packages' admins."""

from django.contrib import admin
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from console.api_tokens import admin as api_tokens_admin  # noqa: F401  (their admins)
from console.audit import admin as audit_admin  # noqa: F401
from console.models import WorkerHeartbeat
from console.usernames import admin as usernames_admin  # noqa: F401  (users' pages)

# The admin's own titles, in the viewer's language like the rest of the console.
admin.site.site_header = _("vLLM Incident Console administration")
admin.site.site_title = _("vLLM Incident Console admin")
admin.site.index_title = _("Site administration")


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ("hostname", "queues", "pid", "started_at", "last_seen", "stopped_at")
    search_fields = ("hostname",)
    readonly_fields = list_display

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
