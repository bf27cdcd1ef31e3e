"""Django admin for action runs and ConfigMap revisions: read-only. Runs change state only
through actions/services.py and the worker (which write the audit log and the
timeline); the audit log and the revisions are evidence."""

from django.contrib import admin
from django.http import HttpRequest

from actions.models import ActionRun, ActionRunEvent, ConfigRevision


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ActionRunEventInline(admin.TabularInline):
    model = ActionRunEvent
    fields = ("occurred_at", "actor", "status_from", "status_to", "message")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(ActionRun)
class ActionRunAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "target", "status", "incident", "requested_by", "requested_at")
    list_filter = ("status", "kind")
    search_fields = ("=id", "target", "idempotency_key")
    list_select_related = ("incident", "requested_by")
    date_hierarchy = "requested_at"
    inlines = [ActionRunEventInline]


@admin.register(ConfigRevision)
class ConfigRevisionAdmin(ReadOnlyAdmin):
    list_display = ("id", "namespace", "name", "captured_at", "reason", "run")
    list_filter = ("namespace", "name")
    date_hierarchy = "captured_at"
