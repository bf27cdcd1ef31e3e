"""Settings of the test identity provider: django-oauth-toolkit in its OpenID Connect
provider mode, on SQLite in a temporary folder (OIDC_PROVIDER_DIR), signing with the RSA
key `python -m tests.oidc_provider` generated there at start."""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ["OIDC_PROVIDER_DIR"])
KEY = DATA / "key.pem"

SECRET_KEY = "test-identity-provider-not-secret"  # a test double
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "tests.oidc_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ]
        },
    }
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": DATA / "provider.sqlite3",
        "OPTIONS": {"timeout": 20},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed only
LOGIN_URL = "/accounts/login/"
# The console runs on the same host (another port) and browsers share cookies across
# ports: the provider's must not overwrite the console's session and CSRF cookies.
SESSION_COOKIE_NAME = "idp_sessionid"
CSRF_COOKIE_NAME = "idp_csrftoken"

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_ISS_ENDPOINT": os.environ["OIDC_PROVIDER_ISSUER"],
    "OIDC_RSA_PRIVATE_KEY": KEY.read_text() if KEY.exists() else "",
    "PKCE_REQUIRED": True,
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Your name and username",
        "email": "Your email address",
        "groups": "The groups you are in",
    },
    "OAUTH2_VALIDATOR_CLASS": "tests.oidc_provider.validator.GroupsValidator",
}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
