"""The only module that knows every app's URLs."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from console.api.auth import ApiTokenApi, ApiTokenDetailApi, ApiTokenListApi
from console.audit.views import audit_list
from console.liveness import probes
from console.metrics import series as metrics
from console.oidc.views import ConsoleLoginView, OidcAuthenticateView, OidcCallbackView
from console.preferences.views import language_set, utc_set
from incidents.ingest.receive import alertmanager_webhook

urlpatterns = [
    path("healthz", probes.healthz, name="healthz"),
    path("readyz", probes.readyz, name="readyz"),
    path("readyz/worker", probes.readyz_worker, name="readyz-worker"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("login/", ConsoleLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Single sign-on (404 unless configured); the names are the ones the library reverses.
    path("oidc/authenticate/", OidcAuthenticateView.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", OidcCallbackView.as_view(), name="oidc_authentication_callback"),
    path("audit/", audit_list, name="audit"),
    path("preferences/language/", language_set, name="preference-language"),
    path("preferences/utc/", utc_set, name="preference-utc"),
    path("admin/", admin.site.urls),
    path("api/v1/alerts/alertmanager", alertmanager_webhook, name="alertmanager-webhook"),
    path("api/v1/auth/token/", ApiTokenApi.as_view(), name="api-token"),
    path("api/v1/auth/tokens/", ApiTokenListApi.as_view(), name="api-tokens"),
    path("api/v1/auth/tokens/<int:pk>/", ApiTokenDetailApi.as_view(), name="api-token-revoke"),
    path("api/v1/", include("postmortems.api_urls")),
    path("api/v1/", include("runbooks.api_urls")),
    path("api/v1/", include("actions.api_urls")),
    path("api/v1/", include("drills.api_urls")),
    path("api/v1/", include("incidents.api_urls")),
    path("api/v1/", include("readiness.api_urls")),
    path("api/v1/pager/", include("pager.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger's init code as a script file: no inline script (CSP).
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="api/swagger_ui.html"
        ),
        name="api-docs",
    ),
    # The action and drill pages kept their /runbooks/ URLs when they became apps; they go
    # before runbooks.urls, which ends with a runbook slug that would swallow "actions/".
    path("runbooks/", include("actions.urls")),
    path("runbooks/", include("drills.urls")),
    path("runbooks/", include("runbooks.urls")),
    path("postmortems/", include("postmortems.urls")),
    path("readiness/", include("readiness.urls")),
    path("pager/", include("pager.urls")),
    path("chat/", include("chatops.urls")),
    path("", include("notifications.urls")),  # its page and its API
    path("", include("incidents.urls")),
]

# JSON under /api/ (an unmatched API URL, e.g. a negative id), the HTML page elsewhere.
handler404 = "console.api.errors.not_found"
# The 403 page says why in the viewer's language (a service's refusal carries both).
handler403 = "console.web.permission_denied"
