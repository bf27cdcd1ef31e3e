"""Single sign-on with an OpenID Connect provider (mozilla-django-oidc), and the switch
that turns local password login off.

Authentication backends (settings.AUTHENTICATION_BACKENDS):
- `PasswordLoginPolicy` refuses a password login that PASSWORD_LOGIN turns off, before
  any password is checked (so the login page, the admin login and the API token endpoint
  alike), except a superuser's while PASSWORD_LOGIN_BREAK_GLASS is on; and any password
  login as a service account (console/service_accounts.py), even one given a password.
- `OIDCBackend` finishes a sign-in at the callback: it validates the ID token more
  strictly than the library does (audience, issuer, expiry are required and checked; the
  library leaves the audience unchecked), then hands the claims to
  console/oidc/services.py, which links the account and maps its groups to a role.

Every refusal is noted on the request (console.audit.services.note_failure) before Django sends
`user_login_failed`, so the audit row and the page's message say why.
"""

from dataclasses import dataclass
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy, gettext_noop
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from console.audit.models import AuditMethod
from console.audit.services import note_failure
from console.errors import DomainError, Translatable
from console.oidc.services import SignInRefused, oidc_account_sync
from console.outgoing import deadline, service_request
from console.service_accounts import is_service_account_name

CALLBACK_URL_NAME = "oidc_authentication_callback"  # the name the library reverses
CLOCK_SKEW_SECONDS = 60


class ProviderUnavailable(DomainError):
    """The identity provider's discovery document could not be read."""


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    jwks_uri: str


def _discover(issuer: str) -> dict[str, Any]:
    url = f"{issuer}/.well-known/openid-configuration"
    timeout = settings.OIDC_TIMEOUT
    try:
        response = service_request("GET", url, deadline=timeout)
    except requests.Timeout as exc:
        raise ProviderUnavailable(
            gettext_noop("The identity provider at %(url)s did not answer in %(timeout)s s."),
            params={"url": url, "timeout": f"{timeout:g}"},
        ) from exc
    except requests.RequestException as exc:
        raise ProviderUnavailable(
            gettext_noop("The identity provider at %(url)s is unreachable: %(error)s"),
            params={"url": url, "error": exc},
        ) from exc
    if response.status_code != 200:
        raise ProviderUnavailable(
            gettext_noop("The identity provider at %(url)s answered HTTP %(status)s."),
            params={"url": url, "status": response.status_code},
        )
    try:
        document = response.json()
    except ValueError as exc:
        raise ProviderUnavailable(
            gettext_noop("%(url)s did not answer JSON."), params={"url": url}
        ) from exc
    if not isinstance(document, dict) or document.get("issuer") != issuer:
        # OpenID Connect Discovery 1.0, section 4.3: they must be identical.
        named = document.get("issuer") if isinstance(document, dict) else None
        raise ProviderUnavailable(
            gettext_noop(
                "%(url)s names the issuer %(named)s, not OIDC_ISSUER %(issuer)s; set OIDC_ISSUER "
                "to exactly the issuer the provider puts in its tokens."
            ),
            params={"url": url, "named": repr(named), "issuer": repr(issuer)},
        )
    return document


def provider() -> Provider:
    """The provider's endpoints: each OIDC_OP_* setting, else the discovery document
    (fetched only when a needed endpoint is not set, and cached). Without a userinfo
    endpoint the claims are the ID token's alone."""
    issuer = settings.OIDC_ISSUER
    configured = {
        "authorization_endpoint": settings.OIDC_OP_AUTHORIZATION_ENDPOINT,
        "token_endpoint": settings.OIDC_OP_TOKEN_ENDPOINT,
        "userinfo_endpoint": settings.OIDC_OP_USER_ENDPOINT,
        "jwks_uri": settings.OIDC_OP_JWKS_ENDPOINT,
    }
    needed = ["authorization_endpoint", "token_endpoint"]
    if not settings.OIDC_RP_SIGN_ALGO.startswith("HS"):
        needed.append("jwks_uri")  # asymmetric signatures: the provider's public keys
    found: dict[str, Any] = {}
    if not all(configured[name] for name in needed):  # userinfo is optional
        key = f"console:oidc-discovery:{issuer}"
        found = cache.get(key) or {}
        if not found:
            found = _discover(issuer)
            cache.set(key, found, settings.OIDC_DISCOVERY_CACHE_SECONDS)
    values = {name: value or str(found.get(name) or "") for name, value in configured.items()}
    if missing := [name for name in needed if not values[name]]:
        raise ProviderUnavailable(
            gettext_noop(
                "The identity provider at %(issuer)s names no %(missing)s; set "
                "the OIDC_OP_*_ENDPOINT settings."
            ),
            params={"issuer": issuer, "missing": ", ".join(missing)},
        )
    return Provider(issuer=issuer, **values)


def axes_skips(request: HttpRequest, credentials: dict[str, Any] | None) -> bool:
    """AXES_WHITELIST_CALLABLE: django-axes neither counts nor blocks sign-in callbacks."""
    return request.path == reverse(CALLBACK_URL_NAME)


class PasswordLoginPolicy:
    """Not a login backend: it only says no, before ModelBackend checks the password."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if username is None or password is None:
            return None
        if is_service_account_name(username):
            reason = gettext_noop(
                "The console's service accounts cannot sign in; sign in as yourself."
            )
            note_failure(request, method=AuditMethod.PASSWORD, reason=reason, username=username)
            raise PermissionDenied(reason)
        if settings.PASSWORD_LOGIN:
            return None
        if settings.PASSWORD_LOGIN_BREAK_GLASS:
            user_model = get_user_model()
            break_glass = user_model._default_manager.filter(
                **{user_model.USERNAME_FIELD: username}, is_superuser=True, is_active=True
            ).exists()
            if break_glass:
                return None  # ModelBackend checks the password, axes counts a wrong one
            reason = gettext_noop(
                "Password login is for break-glass admins only; sign in with single sign-on."
            )
        else:
            reason = gettext_noop("Password login is turned off; sign in with single sign-on.")
        note_failure(request, method=AuditMethod.PASSWORD, reason=reason, username=username)
        raise PermissionDenied(reason)  # stops authenticate(); Django sends user_login_failed


def _token_refusal(exc: jwt.PyJWTError) -> str | Promise:
    """Why the ID token was refused: lazy, so the audit keeps English and the page does not."""
    if isinstance(exc, jwt.InvalidSignatureError):
        return gettext_lazy("its signature does not match the identity provider's keys")
    if isinstance(exc, jwt.InvalidAudienceError):
        return gettext_lazy("it was issued to another client (aud is not OIDC_RP_CLIENT_ID)")
    if isinstance(exc, jwt.InvalidIssuerError):
        return gettext_lazy("it was issued by another provider (iss is not OIDC_ISSUER)")
    if isinstance(exc, jwt.ExpiredSignatureError):
        return gettext_lazy("it has expired (check the clocks of the console and the provider)")
    return str(exc)


class OIDCBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend, configured per sign-in from `provider()`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Not the library's __init__: it needs every endpoint when constructed, and Django
        # constructs each backend on every authenticate() and every request's get_user().
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None
        self.OIDC_OP_TOKEN_ENDPOINT = self.OIDC_OP_USER_ENDPOINT = ""
        self.OIDC_OP_JWKS_ENDPOINT = ""
        self.issuer = settings.OIDC_ISSUER

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        # Only the callback view passes a nonce: a password form posted with ?code=&state=
        # in its URL must not start a token exchange.
        if not settings.OIDC_ENABLED or request is None or "nonce" not in kwargs:
            return None
        self.request = request
        try:
            op = provider()
            self.OIDC_OP_TOKEN_ENDPOINT = op.token_endpoint
            self.OIDC_OP_USER_ENDPOINT = op.userinfo_endpoint
            self.OIDC_OP_JWKS_ENDPOINT = op.jwks_uri
            user = super().authenticate(request, **kwargs)
        except (SignInRefused, ProviderUnavailable) as exc:
            refusal: Translatable = exc
        except requests.Timeout:
            refusal = SignInRefused(
                gettext_noop("The identity provider did not answer in %(timeout)s s."),
                params={"timeout": f"{settings.OIDC_TIMEOUT:g}"},
            )
        except requests.RequestException as exc:
            refusal = SignInRefused(
                gettext_noop("The identity provider refused the sign-in: %(error)s"),
                params={"error": exc},
            )
        except (SuspiciousOperation, jwt.PyJWTError) as exc:
            refusal = SignInRefused(
                gettext_noop("The ID token was refused: %(error)s"), params={"error": exc}
            )
        else:
            if user is not None:
                return user
            refusal = SignInRefused(
                gettext_noop("The identity provider's answer was incomplete (no ID token).")
            )
        note_failure(
            request,
            method=AuditMethod.OIDC,
            reason=str(refusal),  # the audit log keeps English
            shown=refusal.translated(),
            username=getattr(self, "claimed_username", ""),
        )
        return None

    def get_user(self, user_id: Any) -> Any:
        return ModelBackend.get_user(self, user_id)  # an inactive user's session ends

    # The library's three calls to the provider, each with OIDC_TIMEOUT as an overall
    # deadline (console/outgoing): its own timeout bounds each read only.
    def get_token(self, payload: dict[str, Any]) -> Any:
        with deadline(settings.OIDC_TIMEOUT):
            return super().get_token(payload)

    def retrieve_matching_jwk(self, token: Any) -> Any:
        with deadline(settings.OIDC_TIMEOUT):
            return super().retrieve_matching_jwk(token)

    def _verify_jws(self, payload: str | bytes, key: Any) -> dict[str, Any]:
        header = jwt.get_unverified_header(payload)
        if header.get("alg") != self.OIDC_RP_SIGN_ALGO:
            raise SignInRefused(
                gettext_noop(
                    "The ID token was refused: signed with %(alg)s, not OIDC_RP_SIGN_ALGO %(want)s."
                ),
                params={"alg": repr(header.get("alg")), "want": repr(self.OIDC_RP_SIGN_ALGO)},
            )
        try:
            claims = jwt.decode(
                payload,
                key,
                algorithms=[self.OIDC_RP_SIGN_ALGO],
                audience=self.OIDC_RP_CLIENT_ID,
                issuer=self.issuer,
                leeway=CLOCK_SKEW_SECONDS,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            raise SignInRefused(
                gettext_noop("The ID token was refused: %(why)s."),
                params={"why": _token_refusal(exc)},
            ) from exc
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.OIDC_RP_CLIENT_ID:
            # OpenID Connect Core 1.0, 3.1.3.7: several audiences need azp to be us.
            raise SignInRefused(
                gettext_noop("The ID token was refused: it was issued to another party (azp).")
            )
        return claims

    def get_userinfo(
        self, access_token: str, id_token: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        """The ID token's claims, completed by the userinfo endpoint when there is one
        (providers differ in where they put groups)."""
        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT:
            with deadline(settings.OIDC_TIMEOUT):
                info = super().get_userinfo(access_token, id_token, payload)
            if not isinstance(info, dict) or info.get("sub") != payload.get("sub"):
                # OpenID Connect Core 1.0, 5.3.2: the userinfo sub must be the token's.
                raise SignInRefused(
                    gettext_noop("The userinfo answer is about another account (sub).")
                )
            claims.update(info)
        return claims

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        self.claimed_username = str(claims.get(settings.OIDC_USERNAME_CLAIM) or "")
        return oidc_account_sync(issuer=self.issuer, claims=claims, request=self.request)
