"""Targets and rules are configured here; deliveries are readable history.

A target's URL (a Slack webhook URL is itself a credential) and signing secret are
write-only: the form never renders them back, and leaving them blank keeps the stored
value. Lists show `Target.destination`, which holds nothing secret.
"""

from django import forms
from django.contrib import admin, messages
from django.core.validators import URLValidator
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from console.errors import DomainError, page_message
from console.http import AuthedRequest
from incidents.models import Severity
from notifications import services
from notifications.models import RULE_EVENTS, Delivery, Rule, Target

KEEP = gettext_lazy("Leave blank to keep the current value (it is never shown).")


class TargetForm(forms.ModelForm):
    url = forms.CharField(
        label=gettext_lazy("URL"),
        required=False,
        max_length=2000,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=gettext_lazy(
            "Slack: the incoming webhook URL (https://hooks.slack.com/services/…). "
            "Webhook: where to POST the JSON. Write-only."
        ),
    )
    secret = forms.CharField(
        label=gettext_lazy("Signing secret"),
        required=False,
        max_length=200,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=gettext_lazy(
            "Webhook targets: the HMAC-SHA256 key the receiver verifies "
            "X-Console-Signature with (16+ characters). Write-only."
        ),
    )

    class Meta:
        model = Target
        fields = ["name", "kind", "enabled", "language", "url", "secret", "recipients"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["language"].required = False
        for name in ("url", "secret"):
            if self.instance.pk and getattr(self.instance, name):
                # Built per request: the viewer's language is already active.
                self.fields[name].help_text = f"{self.fields[name].help_text} {KEEP}"

    def clean_language(self) -> str:
        # Not sent (a form posted by a script written before targets had a language):
        # keep the stored one, or the console's default for a new target.
        return self.cleaned_data.get("language") or self.instance.language

    def _kept(self, name: str) -> str:
        value = (self.cleaned_data.get(name) or "").strip()
        return value or (getattr(self.instance, name) if self.instance.pk else "")

    def clean_url(self) -> str:
        value = self._kept("url")
        if value:
            URLValidator(schemes=["http", "https"])(value)
        return value

    def clean_secret(self) -> str:
        return self._kept("secret")


@admin.register(Target)
class TargetAdmin(admin.ModelAdmin):
    form = TargetForm
    list_display = ["name", "kind", "language", "destination_column", "enabled", "updated_at"]
    list_filter = ["kind", "enabled", "language"]
    search_fields = ["name"]
    actions = ["send_test"]

    # A property has no verbose name: the column's header is given here.
    @admin.display(description=gettext_lazy("destination"))
    def destination_column(self, target: Target) -> str:
        return target.destination

    @admin.action(description=gettext_lazy("Send a test notification"))
    def send_test(self, request: AuthedRequest, queryset: QuerySet[Target]) -> None:
        for target in queryset:
            try:
                delivery = services.delivery_test(target_id=target.pk, actor=request.user)
            except DomainError as exc:
                self.message_user(request, page_message(exc), messages.ERROR)
                continue
            self.message_user(
                request,
                _(
                    "Test #%(id)s queued for %(target)s; the Notifications page shows "
                    "whether it arrived."
                )
                % {"id": delivery.pk, "target": target.name},
                messages.SUCCESS,
            )


class RuleForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        choices=RULE_EVENTS,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=gettext_lazy("None ticked: every event."),
        label=gettext_lazy("Events"),
    )
    severities = forms.MultipleChoiceField(
        choices=Severity.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=gettext_lazy("None ticked: any severity."),
        label=gettext_lazy("Severities"),
    )

    class Meta:
        model = Rule
        fields = ["name", "enabled", "targets", "events", "severities", "namespaces",
                  "include_drills"]  # fmt: skip
        widgets = {"targets": forms.CheckboxSelectMultiple}


@admin.register(Rule)
class RuleAdmin(admin.ModelAdmin):
    form = RuleForm
    list_display = ["name", "enabled", "event_list", "severity_list", "namespaces", "target_list"]
    list_filter = ["enabled"]
    search_fields = ["name", "namespaces"]

    def get_queryset(self, request: HttpRequest):
        return super().get_queryset(request).prefetch_related("targets")

    # The event and severity values are stored identifiers: listed as stored.
    @admin.display(description=gettext_lazy("events"))
    def event_list(self, rule: Rule) -> str:
        return ", ".join(rule.events) or _("all")

    @admin.display(description=gettext_lazy("severities"))
    def severity_list(self, rule: Rule) -> str:
        return ", ".join(rule.severities) or _("any")

    @admin.display(description=gettext_lazy("targets"))
    def target_list(self, rule: Rule) -> str:
        return ", ".join(t.name for t in rule.targets.all()) or _("none")


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    # History: readable, never edited (a failed one is sent again from the page).
    list_display = ["id", "created_at", "status", "event", "target", "incident", "attempts"]
    list_filter = ["status", "event", "target"]
    list_select_related = ["target", "incident"]
    search_fields = ["summary", "event_key"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
