from django.contrib import admin
from django.http import HttpRequest

from readiness.models import Deployment, SignOff


@admin.register(Deployment)
class DeploymentAdmin(admin.ModelAdmin):
    list_display = ["namespace", "lws", "present", "last_seen_at"]
    readonly_fields = ["last_verification"]


@admin.register(SignOff)
class SignOffAdmin(admin.ModelAdmin):
    # Append-only history: readable, never edited.
    list_display = ["deployment", "item", "action", "by", "at", "expires_on"]

    def has_change_permission(self, request: HttpRequest, obj=None):
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None):
        return False

    def has_add_permission(self, request: HttpRequest):
        return False
