"""The login page (single sign-on and/or a password form) and the two ends of a sign-in
through the identity provider: the redirect there, and the callback that finishes it.

The library's views, with what the console adds: they answer 404 while single sign-on is
not configured, a provider that cannot be reached is a message on the login page rather
than a 500, and every refused callback is audited and explained on the login page.
"""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import LoginView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext_lazy, gettext_noop
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from console.audit import reasons
from console.audit.models import AuditKind, AuditMethod
from console.audit.reasons import audit_reason
from console.audit.services import audit_record, failure_noted
from console.errors import page_message
from console.oidc.backends import ProviderUnavailable, provider
from console.oidc.services import SignInRefused

LOGIN_TEMPLATE = "registration/login.html"
PASSWORD_OFF = gettext_lazy("Password login is turned off here: sign in with %(name)s.")
SIGN_IN_FAILED = gettext_lazy("Sign-in with %(name)s failed: %(reason)s")


def sign_in_options() -> dict[str, Any]:
    """What the login page offers (the template's context)."""
    return {
        "sso_enabled": settings.OIDC_ENABLED,
        "sso_name": settings.OIDC_PROVIDER_NAME,
        "password_login": settings.PASSWORD_LOGIN,
        # Password login off: only break-glass admins (superusers) may still use the form.
        "break_glass_only": not settings.PASSWORD_LOGIN and settings.PASSWORD_LOGIN_BREAK_GLASS,
    }


class ConsoleLoginView(LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return super().get_context_data(**kwargs) | sign_in_options()

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        options = sign_in_options()
        if not (options["password_login"] or options["break_glass_only"]):
            # No form is shown, so a POST is someone trying passwords: refused unread.
            audit_record(
                kind=AuditKind.LOGIN_FAILED,
                method=AuditMethod.PASSWORD,
                request=request,
                username=str(request.POST.get("username", "")),
                reason=audit_reason(reasons.PASSWORD_OFF),
            )
            context = options | {
                "refused": PASSWORD_OFF % {"name": settings.OIDC_PROVIDER_NAME},
                "next": self.get_redirect_url(),
            }
            return render(request, LOGIN_TEMPLATE, context, status=403)
        return super().post(request, *args, **kwargs)


def _unavailable(request: HttpRequest, exc: ProviderUnavailable) -> HttpResponse:
    reason = page_message(exc)
    messages.error(
        request, SIGN_IN_FAILED % {"name": settings.OIDC_PROVIDER_NAME, "reason": reason}
    )
    return redirect("login")


class OidcAuthenticateView(OIDCAuthenticationRequestView):
    """GET /oidc/authenticate/?next=...: off to the identity provider."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.OIDC_ENABLED:
            raise Http404("Single sign-on is not configured.")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider().authorization_endpoint
        except ProviderUnavailable as exc:
            return _unavailable(request, exc)
        return super().get(request)


class OidcCallbackView(OIDCAuthenticationCallbackView):
    """GET /oidc/callback/?code=&state=: the provider sends the browser back here."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.OIDC_ENABLED:
            raise Http404("Single sign-on is not configured.")
        if error := request.GET.get("error"):
            # The provider said no (access_denied, login_required, ...): nothing to exchange.
            description = request.GET.get("error_description", "")
            self._refused(
                SignInRefused(
                    gettext_noop("The identity provider answered %(error)s. %(description)s"),
                    params={"error": error, "description": description},
                )
            )
        elif "code" in request.GET and "state" in request.GET:
            states = request.session.get("oidc_states") or {}
            if request.GET["state"] not in states:
                # The library answers 400 here; it is a stale or forged callback (an old
                # tab, the back button, a link from someone else): say so and start again.
                self._refused(
                    SignInRefused(
                        gettext_noop(
                            "This sign-in link is stale or was started in another browser."
                        )
                    )
                )
                return self.login_failure()
        return super().get(request)

    def _refused(self, refusal: SignInRefused) -> None:
        self.shown = refusal.translated()
        audit_record(
            kind=AuditKind.LOGIN_FAILED,
            method=AuditMethod.OIDC,
            request=self.request,
            reason=str(refusal).strip(),  # English, like every audited reason
        )

    def login_success(self) -> HttpResponse:
        response = super().login_success()
        self.request.session.set_expiry(settings.OIDC_SESSION_SECONDS)
        return response

    def login_failure(self) -> HttpResponse:
        noted = failure_noted(self.request)
        # The audit keeps English; the page says it in its own language.
        shown = getattr(self, "shown", "") or (noted.get("shown", "") if noted else "")
        if shown:
            name = settings.OIDC_PROVIDER_NAME
            messages.error(self.request, SIGN_IN_FAILED % {"name": name, "reason": shown})
        return redirect("login")
