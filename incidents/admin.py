"""Django admin for incidents: mostly read-only, because state changes go through services.

Status, commander and the transition timestamps are changed only by the lifecycle
services (which write the timeline); the admin can fix a title, runbook or namespace.
The timeline is append-only and webhook bodies are evidence: both are read-only here.
"""

from django.contrib import admin
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from incidents.models import Alert, ArchiveBatch, Incident, TimelineEvent, WebhookReceipt
from incidents.timeline_kinds import timeline_kind_choices


class AlertInline(admin.TabularInline):
    model = Alert
    fields = ("alertname", "status", "severity", "fingerprint", "starts_at", "ends_at")
    readonly_fields = fields
    extra = 0
    show_change_link = True
    can_delete = False
    ordering = ("-starts_at",)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Incident)
class IncidentAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "title",
        "severity",
        "status",
        "runbook",
        "namespace",
        "commander",
        "triggered_at",
        "resolved_at",
    )
    list_display_links = ("id", "title")
    list_filter = ("status", "severity", "runbook", "namespace")
    search_fields = ("=id", "title", "runbook", "namespace", "grouping_key")
    list_select_related = ("commander",)
    date_hierarchy = "triggered_at"
    readonly_fields = (
        "status",
        "severity",
        "commander",
        "grouping_key",
        "group_labels",
        "started_at",
        "triggered_at",
        "acknowledged_at",
        "mitigated_at",
        "resolved_at",
        "reopened_at",
        "reopen_count",
        "last_alert_at",
        "created_at",
        "updated_at",
    )
    fieldsets = (
        (None, {"fields": ("title", "runbook", "namespace")}),
        (
            _("State (changed from the console, so the timeline records it)"),
            {
                "fields": ("status", "severity", "commander", "reopen_count"),
            },
        ),
        (
            _("Lifecycle"),
            {
                "fields": (
                    "started_at",
                    "triggered_at",
                    "acknowledged_at",
                    "mitigated_at",
                    "resolved_at",
                    "reopened_at",
                    "last_alert_at",
                ),
            },
        ),
        (_("Grouping"), {"fields": ("grouping_key", "group_labels", "created_at", "updated_at")}),
    )
    inlines = (AlertInline,)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # incidents are opened by alerts

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # deleting would take the timeline (the audit record) with it


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = ("id", "alertname", "status", "severity", "incident", "starts_at", "ends_at")
    list_filter = ("status", "severity", "alertname")
    search_fields = ("alertname", "fingerprint", "grouping_key")
    list_select_related = ("incident",)
    raw_id_fields = ("incident",)
    date_hierarchy = "starts_at"
    readonly_fields = (
        "fingerprint",
        "starts_at",
        "alertname",
        "status",
        "severity",
        "labels",
        "annotations",
        "ends_at",
        "generator_url",
        "grouping_key",
        "first_received_at",
        "last_received_at",
        "receive_count",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # alerts come from Alertmanager


class TimelineKindFilter(admin.SimpleListFilter):
    """The column has no choices (apps register kinds): the labels come from the registry."""

    title = _("kind")
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin):
        return timeline_kind_choices()

    def queryset(self, request: HttpRequest, queryset):
        return queryset.filter(kind=self.value()) if self.value() else queryset


@admin.register(TimelineEvent)
class TimelineEventAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "incident",
        "kind_label",
        "occurred_at",
        "actor",
        "source",
        "short_message",
    )
    list_filter = (TimelineKindFilter, "source")
    search_fields = ("message", "=incident__id")
    list_select_related = ("incident", "actor")
    date_hierarchy = "occurred_at"

    @admin.display(description=_("kind"), ordering="kind")
    def kind_label(self, obj: TimelineEvent) -> str:
        return obj.get_kind_display()

    @admin.display(description=_("message"))
    def short_message(self, obj: TimelineEvent) -> str:
        return obj.message[:120]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(WebhookReceipt)
class WebhookReceiptAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "received_at",
        "outcome",
        "http_status",
        "alert_count",
        "error_field",
        "remote_addr",
        "source",
    )
    list_filter = ("outcome", "http_status", "source")
    search_fields = ("error", "error_field", "group_key")
    date_hierarchy = "received_at"
    raw_id_fields = ("replay_of",)

    def get_queryset(self, request: HttpRequest):
        return super().get_queryset(request).defer("body", "body_raw")  # can be megabytes

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # Raw bytes would show as a memoryview: the receipt page shows them escaped.
        return [f.name for f in self.model._meta.fields if f.name != "body_raw"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ArchiveBatch)
class ArchiveBatchAdmin(admin.ModelAdmin):
    """Read-only: a batch is the record of what retention took out of the hot tables (its
    audit entries name it); runs and restores go through the archive page, the API or the
    management commands, which keep its counts and the timeline right."""

    list_display = (
        "id",
        "created_at",
        "finished_at",
        "created_by",
        "method",
        "cutoff",
        "incidents",
        "alerts",
        "events",
        "restored",
    )
    list_filter = ("method",)
    list_select_related = ("created_by",)
    date_hierarchy = "created_at"

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # protected anyway: its archived incidents refer to it
