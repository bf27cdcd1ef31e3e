from django.contrib.auth import views as auth_views
from django.urls import include, path

from tests.oidc_provider import control

urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    # Test controls: set a user's groups, make the next ID tokens bad (control.py).
    path("control/user", control.user_put, name="control-user"),
    path("control/tamper", control.tamper_put, name="control-tamper"),
]
