"""The pager's configuration in the Django admin: teams and what they own, schedules and
their layers, escalation policies, heartbeats and maintenance windows. Pages, deliveries
and maintenance summaries are history: readable here, never edited.

Secrets are write-only, as in notifications/admin.py: a contact method's address (often
an apprise URL with a token) and a schedule's iCal URL are never rendered back, and
leaving the field blank keeps the stored value.
"""

from datetime import UTC, datetime

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy

from console.outgoing import OutgoingRefused
from pager.heartbeats.services import heartbeat_delete
from pager.models import (
    ContactMethod,
    EscalationPolicy,
    EscalationStep,
    Heartbeat,
    MaintenanceSummary,
    MaintenanceWindow,
    Override,
    Ownership,
    Page,
    PageDelivery,
    PagerProfile,
    Rotation,
    RotationMember,
    Schedule,
    ShiftSwap,
    Team,
)
from pager.paging.methods import AddressInvalid, address_check
from pager.schedules.rotation import wall_clock, wall_clock_stored

KEEP = gettext_lazy("Leave blank to keep the current value (it is never shown).")


def _write_only(label, *, help_text, max_length: int = 2000) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=False,
        max_length=max_length,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=help_text,
    )


class _KeepSecretForm(forms.ModelForm):
    """A form whose `secret_fields` are write-only: blank keeps the stored value."""

    secret_fields: tuple[str, ...] = ()
    secret_required: tuple[str, ...] = ()

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in self.secret_fields:
            if self.instance.pk and getattr(self.instance, name):
                # Built per request: the viewer's language is already active.
                self.fields[name].help_text = f"{self.fields[name].help_text} {KEEP}"

    def _kept(self, name: str) -> str:
        value = (self.cleaned_data.get(name) or "").strip()
        kept = value or (getattr(self.instance, name) if self.instance.pk else "")
        if not kept and name in self.secret_required:
            raise forms.ValidationError(gettext_lazy("This field is required."))
        return kept


# --- teams --------------------------------------------------------------------------------
class OwnershipInline(admin.TabularInline):
    model = Ownership
    extra = 1
    fields = ["namespace", "lws", "model", "node_pool", "runbook"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "escalation_policy", "channel", "is_default"]
    list_filter = ["is_default"]
    list_select_related = ["escalation_policy", "channel"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    filter_horizontal = ["members"]
    inlines = [OwnershipInline]


# --- schedules ------------------------------------------------------------------------------
class ScheduleForm(_KeepSecretForm):
    secret_fields = ("ical_url",)
    ical_url = _write_only(
        gettext_lazy("iCal URL"),
        help_text=gettext_lazy(
            "A calendar read as the lowest layer, re-read on the interval below (it often "
            "carries a secret: write-only). Or paste the calendar into the iCal field."
        ),
    )

    class Meta:
        model = Schedule
        fields = ["team", "name", "slug", "time_zone", "ical_url", "ical_text",
                  "ical_refresh_minutes"]  # fmt: skip

    def clean_ical_url(self) -> str:
        value = self._kept("ical_url")
        if value:
            forms.URLField(assume_scheme="https").clean(value)
        return value


class WallClockField(forms.DateTimeField):
    """A rotation's first handoff and end: a wall-clock time in the SCHEDULE's zone,
    stored naive-as-UTC (pager.schedules.rotation.wall_clock_stored), so neither the
    admin's own time zone nor Django's conversion may shift it."""

    def prepare_value(self, value):
        return wall_clock(value) if isinstance(value, datetime) else value

    def to_python(self, value):
        if isinstance(value, datetime):
            return wall_clock_stored(wall_clock(value))
        with timezone.override(UTC):  # parsed as typed, then tagged UTC: no shift
            return super().to_python(value)


class RotationForm(forms.ModelForm):
    starts_at = WallClockField(
        label=gettext_lazy("first handoff (local)"),
        help_text=gettext_lazy("A date and time in the schedule's own time zone."),
    )
    ends_at = WallClockField(
        label=gettext_lazy("ends (local)"),
        required=False,
        help_text=gettext_lazy("Optional, in the schedule's own time zone."),
    )

    class Meta:
        model = Rotation
        fields = ["schedule", "name", "priority", "frequency", "interval", "shift_hours",
                  "starts_at", "ends_at", "restrict_weekdays", "restrict_start",
                  "restrict_end"]  # fmt: skip


class RotationInline(admin.TabularInline):
    model = Rotation
    form = RotationForm
    extra = 0
    show_change_link = True  # the members are edited on the rotation's own page
    fields = ["name", "priority", "frequency", "interval", "shift_hours", "starts_at", "ends_at"]


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    form = ScheduleForm
    list_display = ["name", "slug", "team", "time_zone", "ical_fetched_at", "ical_error"]
    list_filter = ["team"]
    list_select_related = ["team"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["ical_fetched_at", "ical_error"]
    inlines = [RotationInline]


class RotationMemberInline(admin.TabularInline):
    model = RotationMember
    extra = 1
    fields = ["position", "user"]
    autocomplete_fields = ["user"]


@admin.register(Rotation)
class RotationAdmin(admin.ModelAdmin):
    form = RotationForm
    list_display = ["name", "schedule", "priority", "frequency", "interval", "first_handoff"]
    list_filter = ["schedule", "frequency"]
    list_select_related = ["schedule"]
    search_fields = ["name", "schedule__name"]
    inlines = [RotationMemberInline]

    @admin.display(description=gettext_lazy("first handoff (local)"))
    def first_handoff(self, rotation: Rotation) -> str:
        return f"{wall_clock(rotation.starts_at):%Y-%m-%d %H:%M} ({rotation.schedule.time_zone})"


@admin.register(Override)
class OverrideAdmin(admin.ModelAdmin):
    list_display = ["schedule", "user", "starts_at", "ends_at", "source", "replaces",
                    "cancelled_at"]  # fmt: skip
    list_filter = ["source", "schedule"]
    list_select_related = ["schedule", "user", "replaces"]
    date_hierarchy = "starts_at"
    autocomplete_fields = ["user", "replaces"]
    readonly_fields = ["created_by", "created_at"]

    def save_model(self, request: HttpRequest, obj: Override, form, change: bool) -> None:
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)


@admin.register(ShiftSwap)
class ShiftSwapAdmin(admin.ModelAdmin):
    # Made and decided on the team page (swap_request/accept/cancel); the admin reads them.
    list_display = ["id", "schedule", "requester", "starts_at", "ends_at", "state", "taker"]
    list_filter = ["state", "schedule"]
    list_select_related = ["schedule", "requester", "taker"]
    readonly_fields = ["schedule", "requester", "starts_at", "ends_at", "note", "state",
                       "taker", "override", "created_at", "decided_at"]  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(PagerProfile)
class PagerProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "time_zone"]
    search_fields = ["user__username"]
    autocomplete_fields = ["user"]


# --- escalation -----------------------------------------------------------------------------
class EscalationStepInline(admin.TabularInline):
    model = EscalationStep
    extra = 1
    fk_name = "policy"
    fields = ["position", "action", "schedule", "user", "team", "wait_minutes", "severities",
              "active_from", "active_until", "time_zone"]  # fmt: skip
    autocomplete_fields = ["user"]


@admin.register(EscalationPolicy)
class EscalationPolicyAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "repeat_times", "ack_timeout_minutes", "is_default"]
    list_filter = ["is_default"]
    list_select_related = ["team"]
    search_fields = ["name"]
    inlines = [EscalationStepInline]


# --- contact methods and pages --------------------------------------------------------------
class ContactMethodForm(_KeepSecretForm):
    secret_fields = ("address",)
    secret_required = ("address",)
    address = _write_only(
        gettext_lazy("address"),
        help_text=gettext_lazy(
            "Push, SMS, voice, Telegram and Slack: an apprise URL; email: an address; "
            "webhook: a URL. Write-only."
        ),
    )

    class Meta:
        model = ContactMethod
        fields = ["user", "position", "kind", "label", "address", "enabled"]

    def clean(self):
        cleaned = super().clean() or {}
        kind, address = cleaned.get("kind"), cleaned.get("address")
        if kind and address:
            # Every check the page's service makes but resolving a name (the admin saves
            # inside a transaction; every send still passes the outgoing guard).
            try:
                cleaned["address"] = address_check(kind, address, resolve=False)
            except (AddressInvalid, OutgoingRefused) as exc:
                message = exc.translated() if isinstance(exc, AddressInvalid) else str(exc)
                self.add_error("address", message)
        return cleaned

    def clean_address(self) -> str:
        return self._kept("address")


@admin.register(ContactMethod)
class ContactMethodAdmin(admin.ModelAdmin):
    form = ContactMethodForm
    list_display = ["user", "position", "kind", "label", "enabled", "last_test_at"]
    list_filter = ["kind", "enabled"]
    list_select_related = ["user"]
    search_fields = ["user__username", "label"]
    autocomplete_fields = ["user"]
    readonly_fields = ["last_test_at", "last_test_result"]


class PageDeliveryInline(admin.TabularInline):
    model = PageDelivery
    extra = 0
    can_delete = False
    fields = ["position", "kind", "state", "attempts", "claimed_at", "sent_at", "error"]
    readonly_fields = ["position", "kind", "state", "attempts", "claimed_at", "sent_at", "error"]

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    # History: readable, never edited.
    list_display = ["id", "created_at", "incident", "user", "channel", "status", "step_position"]
    list_filter = ["status"]
    list_select_related = ["incident", "user", "channel"]
    search_fields = ["key", "user__username"]
    date_hierarchy = "created_at"
    inlines = [PageDeliveryInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


# --- heartbeats and maintenance -------------------------------------------------------------
@admin.register(Heartbeat)
class HeartbeatAdmin(admin.ModelAdmin):
    # HTTP heartbeats are made on the heartbeats page, which shows their token once.
    list_display = ["name", "slug", "kind", "source", "team", "state", "last_seen_at",
                    "interval_seconds", "enabled"]  # fmt: skip
    list_filter = ["kind", "state", "enabled", "team"]
    list_select_related = ["team"]
    search_fields = ["name", "slug", "source"]
    readonly_fields = ["state", "last_seen_at", "missing_since", "incident", "created_at"]

    # Deleting goes through the service: a missing heartbeat's alert is resolved first,
    # so its incident does not stay open for ever, and the deletion is audited.
    def delete_model(self, request, obj: Heartbeat) -> None:
        heartbeat_delete(heartbeat_id=obj.pk, actor=request.user)

    def delete_queryset(self, request, queryset) -> None:
        for pk in queryset.values_list("pk", flat=True):
            heartbeat_delete(heartbeat_id=pk, actor=request.user)


@admin.register(MaintenanceWindow)
class MaintenanceWindowAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "starts_at", "ends_at", "recurrence", "time_zone",
                    "cancelled_at"]  # fmt: skip
    list_filter = ["team"]
    list_select_related = ["team"]
    search_fields = ["name", "reason"]
    date_hierarchy = "starts_at"
    readonly_fields = ["created_by", "created_at"]

    def save_model(self, request: HttpRequest, obj: MaintenanceWindow, form, change) -> None:
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)


@admin.register(MaintenanceSummary)
class MaintenanceSummaryAdmin(admin.ModelAdmin):
    list_display = ["window", "occurrence_start", "occurrence_end", "written_at"]
    list_select_related = ["window"]
    readonly_fields = ["window", "occurrence_start", "occurrence_end", "incident_ids", "text",
                       "written_at"]  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
