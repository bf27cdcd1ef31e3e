"""The chat set-up in the Django admin: installations (Workspace) with their team
channels, and who a chat user is in the console (ChatIdentity). Threads, posts and
interactions are history: readable here, never edited.

The bot token and the signing secret are write-only, as in notifications/admin.py: the
form never renders them back and leaving them blank keeps the stored value. Every write
goes through chatops/services/config.py, which audits it (without the secrets).
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy

from chatops.models import (
    ChatIdentity,
    ChatInteraction,
    ChatPost,
    ChatThread,
    TeamChannel,
    Workspace,
)
from chatops.services import config
from console.errors import DomainError, page_message

HISTORY = (ChatThread, ChatPost, ChatInteraction, ChatIdentity)
KEEP = gettext_lazy("Leave blank to keep the current value (it is never shown).")


def _actor(request: HttpRequest) -> User:
    # The admin lets only signed-in staff in: the user is a User.
    return cast(User, request.user)


def _write_only(label: Any, *, help_text: Any, max_length: int) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=False,
        max_length=max_length,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=help_text,
    )


class WorkspaceForm(forms.ModelForm):
    bot_token = _write_only(
        gettext_lazy("Bot token"),
        max_length=500,
        help_text=gettext_lazy(
            "Slack: the app's Bot User OAuth Token (xoxb-…). Mattermost: the bot account's "
            "access token. Write-only."
        ),
    )
    signing_secret = _write_only(
        gettext_lazy("Signing secret"),
        max_length=200,
        help_text=gettext_lazy(
            "Slack: the app's signing secret (Basic Information). Mattermost: the slash "
            "command's token. Write-only."
        ),
    )
    secret_fields = ("bot_token", "signing_secret")

    class Meta:
        model = Workspace
        fields = ["name", "surface", "enabled", "api_url", "bot_token", "signing_secret",
                  "external_team", "default_channel", "own_channel_severities",
                  "channel_prefix", "include_drills", "language"]  # fmt: skip

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in self.secret_fields:
            if self.instance.pk and getattr(self.instance, name):
                # Built per request: the viewer's language is already active.
                self.fields[name].help_text = f"{self.fields[name].help_text} {KEEP}"

    def _kept(self, name: str) -> str:
        value = (self.cleaned_data.get(name) or "").strip()
        kept = value or (getattr(self.instance, name) if self.instance.pk else "")
        if not kept:
            raise forms.ValidationError(gettext_lazy("This field is required."))
        return str(kept)

    def clean_bot_token(self) -> str:
        return self._kept("bot_token")

    def clean_signing_secret(self) -> str:
        return self._kept("signing_secret")

    def clean_api_url(self) -> str:
        url = str(self.cleaned_data.get("api_url") or "")
        if url and (not self.instance.pk or url != self.instance.api_url):
            try:
                config.api_url_check(url)
            except DomainError as exc:
                raise forms.ValidationError(exc.translated()) from None
        return url


class TeamChannelInline(admin.TabularInline):
    model = TeamChannel
    extra = 1
    fields = ["team", "channel", "language"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    form = WorkspaceForm
    list_display = ["name", "surface", "enabled", "default_channel", "language", "updated_at"]
    list_filter = ["surface", "enabled"]
    search_fields = ["name", "default_channel", "external_team"]
    inlines = [TeamChannelInline]

    def save_model(self, request: HttpRequest, obj: Workspace, form: Any, change: bool) -> None:
        config.workspace_save(actor=_actor(request), workspace=obj)

    def delete_model(self, request: HttpRequest, obj: Workspace) -> None:
        config.workspace_delete(actor=_actor(request), workspace_id=obj.pk)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Workspace]) -> None:
        for pk in queryset.values_list("pk", flat=True):
            config.workspace_delete(actor=_actor(request), workspace_id=pk)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        # An installation's history (threads, posts, requests, identities) goes with it:
        # no separate right to delete that read-only history is asked for.
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        history = {str(m._meta.verbose_name) for m in HISTORY}
        return deleted, counts, {p for p in perms_needed if str(p) not in history}, protected

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        # The team channels, one by one through the service (each audited).
        channels = formset.save(commit=False)
        for gone in formset.deleted_objects:
            config.team_channel_delete(actor=_actor(request), channel_id=gone.pk)
        for channel in channels:
            config.team_channel_save(actor=_actor(request), channel=channel)
        formset.save_m2m()


class IdentityForm(forms.ModelForm):
    class Meta:
        model = ChatIdentity
        fields = ["user"]
        help_texts = {
            "user": gettext_lazy(
                "The console user this chat user acts as. Empty: they may read, not act."
            )
        }


@admin.register(ChatIdentity)
class ChatIdentityAdmin(admin.ModelAdmin):
    # Identities appear when a chat user is first seen; here an admin links or unlinks one.
    form = IdentityForm
    list_display = ["external_name", "external_user", "workspace", "user", "mapped_by",
                    "checked_at"]  # fmt: skip
    list_filter = ["workspace", "mapped_by"]
    list_select_related = ["workspace", "user"]
    search_fields = ["external_name", "external_user", "email", "user__username"]
    readonly_fields = ["workspace", "external_user", "external_name", "email", "mapped_by",
                       "checked_at", "created_at"]  # fmt: skip
    actions = ["unlink"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ChatIdentity, form: Any, change: bool) -> None:
        user = form.cleaned_data.get("user")
        config.identity_link(
            actor=_actor(request), identity_id=obj.pk, user_id=user.pk if user else None
        )
        obj.refresh_from_db()

    @admin.action(description=gettext_lazy("Unlink from their console user"))
    def unlink(self, request: HttpRequest, queryset: QuerySet[ChatIdentity]) -> None:
        for identity in queryset.filter(user__isnull=False):
            try:
                config.identity_link(actor=_actor(request), identity_id=identity.pk, user_id=None)
            except DomainError as exc:
                self.message_user(request, page_message(exc), messages.ERROR)


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ChatThread)
class ChatThreadAdmin(_ReadOnly):
    list_display = ["incident", "workspace", "channel", "own_channel", "language", "created_at"]
    list_filter = ["workspace", "own_channel"]
    list_select_related = ["incident", "workspace"]
    search_fields = ["channel", "root"]
    fields = ["incident", "workspace", "channel", "own_channel", "root", "language", "created_at"]


@admin.register(ChatPost)
class ChatPostAdmin(_ReadOnly):
    # The reply URL (a Slack response_url lets anyone answer in the user's name) is left out.
    list_display = ["id", "created_at", "workspace", "kind", "status", "attempts", "thread",
                    "sent_at"]  # fmt: skip
    list_filter = ["status", "kind", "workspace"]
    list_select_related = ["workspace", "thread"]
    search_fields = ["key", "external_id", "last_error"]
    date_hierarchy = "created_at"
    fields = ["workspace", "thread", "kind", "key", "status", "attempts", "next_attempt_at",
              "last_error", "external_id", "payload", "created_at", "sent_at"]  # fmt: skip


@admin.register(ChatInteraction)
class ChatInteractionAdmin(_ReadOnly):
    list_display = ["id", "received_at", "workspace", "kind", "action", "external_user", "user",
                    "incident", "status", "repeats"]  # fmt: skip
    list_filter = ["status", "kind", "workspace"]
    list_select_related = ["workspace", "user", "incident"]
    search_fields = ["action", "external_user", "outcome"]
    date_hierarchy = "received_at"
    fields = ["workspace", "key", "kind", "action", "external_user", "identity", "user",
              "incident", "request", "status", "outcome", "repeats", "received_at",
              "done_at"]  # fmt: skip
