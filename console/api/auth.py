"""API tokens over the API: POST /api/v1/auth/token/ (username + password -> a new token),
GET /api/v1/auth/tokens/ (list them, never a key) and DELETE /api/v1/auth/tokens/{id}/.

The password check goes through django.contrib.auth.authenticate with the request, so
django-axes counts a wrong password here toward the same username + address lockout as
the login page and the admin login.
"""

from django.conf import settings
from django.contrib.auth import authenticate, user_logged_in
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from console.api.base import ITEM_READ_ERRORS, LIST_ERRORS, ConsoleApi, DomainErrorSerializer
from console.api_tokens.models import CLIENT_MAX
from console.api_tokens.services import api_token_issue, api_token_list, api_token_revoke
from console.http import AuthedApiRequest
from console.login_lockout import lockout_response

WRONG = "Wrong username or password."
TAG = "auth"


def _lifetime() -> str:
    return (
        f"It works for {settings.API_TOKEN_TTL_HOURS} hours (API_TOKEN_TTL_HOURS, at most "
        f"{settings.API_TOKEN_TTL_MAX_HOURS}) unless revoked first; a changed password, a "
        "deactivated account or a lost console role revokes all of a user's tokens."
    )


class ApiTokenCredentialsSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)
    client = serializers.CharField(
        max_length=CLIENT_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="What the token is for (e.g. grafana, ci), shown when tokens are listed.",
    )


class ApiTokenIssuedSerializer(serializers.Serializer):
    token = serializers.CharField(
        help_text="Send it as `Authorization: Token <token>`. Shown this once: only a hash "
        "of it is kept."
    )
    expiry = serializers.DateTimeField(help_text="When the token stops working.")
    id = serializers.IntegerField(help_text="The token's id, to list or revoke it.")


class ApiTokenSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    user = serializers.CharField(source="user.username", help_text="The owner's username.")
    client = serializers.CharField()
    created = serializers.DateTimeField()
    expiry = serializers.DateTimeField(help_text="When the token stops working.")


class ApiTokenListQuerySerializer(serializers.Serializer):
    user = serializers.CharField(
        max_length=150,
        required=False,
        allow_blank=True,
        default="",
        help_text="Whose tokens (a username); yours when absent. Someone else's: admins only.",
    )


class ApiTokenErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


class ApiTokenLockedOutSerializer(ApiTokenErrorSerializer):
    code = serializers.CharField()
    retry_after_seconds = serializers.IntegerField()


class ApiTokenApi(APIView):
    # The credentials are in the body: no session (so no CSRF) and no token needed.
    authentication_classes = []
    permission_classes = [AllowAny]

    @extend_schema(
        tags=[TAG],
        summary="Exchange a username and password for a new API token",
        description="Each call issues a new token (one per client: Grafana, CI, ...), "
        "up to API_TOKEN_LIMIT_PER_USER unexpired tokens per person. " + _lifetime(),
        request=ApiTokenCredentialsSerializer,
        auth=[],
        responses={
            200: ApiTokenIssuedSerializer,
            # Two shapes: {"detail": WRONG}, or DRF's {"<field>": ["..."]} for a missing
            # field (found by the schemathesis fuzz), so the schema is a plain object.
            400: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description=f'{{"detail": "{WRONG}"}}, or {{"<field>": ["<message>"]}}.',
            ),
            403: OpenApiResponse(
                ApiTokenErrorSerializer,
                description="The user has no console role, or is a service account.",
            ),
            409: OpenApiResponse(
                DomainErrorSerializer,
                description="The user already holds API_TOKEN_LIMIT_PER_USER unexpired "
                "tokens; revoke one first.",
            ),
            429: OpenApiResponse(
                ApiTokenLockedOutSerializer,
                description="Too many failed logins for this username from this address "
                "(LOGIN_FAILURE_LIMIT); retry after the cool-off (Retry-After header).",
            ),
        },
    )
    def post(self, request: Request):
        form = ApiTokenCredentialsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        client = form.validated_data.pop("client")
        django_request = request._request  # axes marks the lockout on the Django request
        user = authenticate(django_request, **form.validated_data)
        if getattr(django_request, "axes_locked_out", False):
            return lockout_response(django_request)
        if user is None:
            return Response({"detail": WRONG}, status=400)
        token, key = api_token_issue(user=user, client=client)
        # A successful login for the audit log (axes' AccessLog), and it clears the
        # failure count as a login on the page does.
        user_logged_in.send(sender=user.__class__, request=django_request, user=user)
        body = ApiTokenIssuedSerializer({"token": key, "expiry": token.expiry, "id": token.pk})
        return Response(body.data)


class ApiTokensApi(ConsoleApi):
    noun = "API token"


@extend_schema(tags=[TAG])
class ApiTokenListApi(ApiTokensApi):
    """Your unexpired API tokens, newest first (never their keys); an admin may ask for
    anyone's with `?user=<username>`. Paginated (`?page=`)."""

    @extend_schema(
        operation_id="auth_tokens_list",
        summary="List API tokens",
        parameters=[ApiTokenListQuerySerializer],
        responses={200: ApiTokenSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = ApiTokenListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        tokens = api_token_list(actor=request.user, username=query.validated_data["user"])
        page = self.paginate_queryset(tokens)
        return self.get_paginated_response(ApiTokenSerializer(page, many=True).data)


@extend_schema(tags=[TAG])
class ApiTokenDetailApi(ApiTokensApi):
    """Revoke an API token at once: yours, or anyone's for an admin. The audit log keeps
    whose it was, by whom and when."""

    @extend_schema(
        operation_id="auth_tokens_destroy",
        summary="Revoke an API token",
        request=None,
        responses={204: None, **ITEM_READ_ERRORS},
    )
    def delete(self, request: AuthedApiRequest, pk: int):
        api_token_revoke(actor=request.user, token_id=pk, request=request._request)
        return Response(status=204)
