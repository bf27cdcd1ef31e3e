"""`Authorization: Token <key>` for the REST API: django-rest-knox's check (the key's
digest against the stored ones, the expiry, an active user) in one query, and the
security scheme the OpenAPI schema documents."""

from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from knox.auth import TokenAuthentication
from rest_framework import exceptions

from console.api_tokens.models import ApiToken


class ApiTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, token: bytes) -> tuple[Any, ApiToken]:
        try:
            token.decode("utf-8")
        except UnicodeDecodeError as exc:  # knox would let this through as a 500
            raise exceptions.AuthenticationFailed("Invalid token header.") from exc
        return super().authenticate_credentials(token)

    def _cleanup_token(self, auth_token: ApiToken) -> bool:
        # knox also reads and deletes the user's other expired tokens here: a query on
        # every request. Only this token's end matters to this request; the others are
        # deleted when the user is next issued one, and are never listed.
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            auth_token.delete()
            return True
        return False


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = ApiTokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        scheme = build_bearer_security_scheme_object(
            header_name="Authorization",
            token_prefix="Token",  # noqa: S106  (the header's scheme word, not a secret)
        )
        scheme["description"] = (
            "`Authorization: Token <key>`, the key from POST /api/v1/auth/token/. A key "
            f"works for {settings.API_TOKEN_TTL_HOURS} hours after it was issued "
            f"(API_TOKEN_TTL_HOURS, at most {settings.API_TOKEN_TTL_MAX_HOURS}), until its "
            "owner's password changes, the account is deactivated or loses its console "
            "role, or it is revoked (DELETE /api/v1/auth/tokens/{id}/)."
        )
        return scheme
