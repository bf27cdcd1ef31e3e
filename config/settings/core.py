"""The Django project itself: the debug switch, the installed apps, the middleware, the
root URLconf, templates and static files."""

from config.settings.env import BASE_DIR, VAR_DIR, env

DEBUG = env.bool("DEBUG", default=False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",  # API tokens (console/api_tokens/); rest_framework.authtoken kept them in clear
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "csp",
    "console",
    "incidents",
    "runbooks",
    "actions",
    "drills",
    "postmortems",
    "readiness",
    "notifications",
    "pager",
    "chatops",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # How people reach the console, for notification links while NOTIFY_CONSOLE_URL is
    # unset (notifications/links.py).
    "notifications.links.SeenOriginMiddleware",
    # After sessions and auth: the viewer's saved language and time zone win over the
    # browser's.
    "console.viewer.ViewerMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, so it sees the lockout flag the login views leave on the request.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context_processors.console",
            ],
        },
    },
]

# --- Static files (served by whitenoise; nothing from a CDN) ---------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = True  # serve straight from static/ when collectstatic has not run
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
