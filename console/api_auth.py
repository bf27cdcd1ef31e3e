"""POST /api/v1/auth/token/: username + password -> the user's API token.

The password check goes through django.contrib.auth.authenticate with the request, so
django-axes counts a wrong password here toward the same username + address lockout as
the login page and the admin login.
"""

from django.contrib.auth import authenticate, user_logged_in
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from console.login_lockout import lockout_response
from console.services import api_token_issue

WRONG = "Wrong username or password."


class ApiTokenCredentialsSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


class ApiTokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send it as `Authorization: Token <token>`.")


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
        tags=["auth"],
        summary="Exchange a username and password for the user's API token",
        request=ApiTokenCredentialsSerializer,
        auth=[],
        responses={
            200: ApiTokenSerializer,
            # Two shapes: {"detail": WRONG}, or DRF's {"<field>": ["..."]} for a missing
            # field (found by the schemathesis fuzz), so the schema is a plain object.
            400: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description=f'{{"detail": "{WRONG}"}}, or {{"<field>": ["<message>"]}}.',
            ),
            403: OpenApiResponse(
                ApiTokenErrorSerializer, description="The user has no console role."
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
        django_request = request._request  # axes marks the lockout on the Django request
        user = authenticate(django_request, **form.validated_data)
        if getattr(django_request, "axes_locked_out", False):
            return lockout_response(django_request)
        if user is None:
            return Response({"detail": WRONG}, status=400)
        token = api_token_issue(user=user)
        # A successful login for the audit log (axes' AccessLog), and it clears the
        # failure count as a login on the page does.
        user_logged_in.send(sender=user.__class__, request=django_request, user=user)
        return Response({"token": token.key})
