"""API tokens in the Django admin: listed (never a key or its digest) and revoked, each
revocation audited like one made through the API. Tokens are issued only by the token
endpoint, so there is no "add"."""

from django.contrib import admin
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest

from console.api_tokens.models import ApiToken
from console.api_tokens.services import api_token_revoke
from console.audit.models import AuditMethod


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "client", "created", "expiry")
    search_fields = ("user__username", "client")
    list_select_related = ("user",)
    date_hierarchy = "created"
    fields = list_display
    readonly_fields = list_display

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: ApiToken) -> None:
        self.delete_queryset(request, ApiToken.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        actor = request.user
        assert isinstance(actor, User)  # the admin lets only signed-in staff this far
        for token_id in queryset.values_list("pk", flat=True):
            api_token_revoke(
                actor=actor, token_id=token_id, method=AuditMethod.ADMIN, request=request
            )
