"""Settings for the incident console, read from the environment.

With no environment at all the console runs on embedded defaults: a SQLite file in
WAL mode and kombu's filesystem broker under VAR_DIR, so `make run` needs no server.
Production sets DATABASE_URL=postgres://… and CELERY_BROKER_URL=redis://….
"""

import os
import secrets
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.settings.env import BASE_DIR, EMBEDDED, env

VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var"))).resolve()

DEBUG = env.bool("DEBUG", default=False)


def _local_secret(name: str) -> str:
    """A random secret kept in VAR_DIR (0600), made on first use. Embedded mode only:
    production must pass secrets in the environment."""
    path = VAR_DIR / name
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32))
    return path.read_text().strip()


SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not (EMBEDDED or DEBUG):
        raise ImproperlyConfigured("SECRET_KEY must be set (production settings).")
    SECRET_KEY = _local_secret("secret_key")
# A changed SECRET_KEY: the old ones, comma-separated, so sessions and the secrets stored
# encrypted (console/encryption.py derives their keys from SECRET_KEY) still read.
SECRET_KEY_FALLBACKS = env.list("SECRET_KEY_FALLBACKS", default=[])
# Secrets at rest (console/encryption.py): comma-separated keys of 32+ random characters;
# the first encrypts, the others only decrypt (rotation: the new key first, then
# `manage.py secrets_rotate`, then drop the old). `check --deploy` requires one.
FIELD_ENCRYPTION_KEYS = [
    k.strip() for k in env.list("FIELD_ENCRYPTION_KEYS", default=[]) if k.strip()
]
if not FIELD_ENCRYPTION_KEYS and EMBEDDED:
    FIELD_ENCRYPTION_KEYS = [_local_secret("field_encryption_key")]
SALT_KEY = FIELD_ENCRYPTION_KEYS  # django-fernet-encrypted-fields' name for them
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
# In Kubernetes, the pod's own IP (downward API): kubelet probes and Prometheus address
# the pod by IP, and Django would refuse that Host header otherwise.
if POD_IP := env.str("POD_IP", default=""):
    ALLOWED_HOSTS.append(POD_IP)
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

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

# --- Database -------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'console.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process read while the worker writes; IMMEDIATE transactions take
    # the write lock up front so two writers queue on busy_timeout instead of failing
    # with "database is locked" halfway through a transaction.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": (
            "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;PRAGMA busy_timeout=20000;"
        ),
    }
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault(
        "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=5)
    )
    if DATABASES["default"]["ENGINE"].endswith("postgresql"):
        # psycopg prepares a statement after this many runs on a connection (ingestion's,
        # which bind on the server: incidents/services/ingestion_sql.py). "none" turns it
        # off, for a PgBouncer in transaction mode older than 1.21 or without
        # max_prepared_statements.
        threshold = env.str("DATABASE_PREPARE_THRESHOLD", default="5").strip().lower()
        DATABASES["default"]["OPTIONS"].setdefault(
            "prepare_threshold", None if threshold in ("none", "off", "") else int(threshold)
        )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache (optional Redis) -----------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
            # Two consoles (or a bench beside one) sharing a Redis keep apart by prefix.
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default=""),
        }
    }

# --- Auth, lockout and sign-in: config/settings/signin.py -----------------------------
from config.settings.signin import *  # noqa: E402, F403

# --- HTTPS and browser hardening --------------------------------------------------------
# Production (a DATABASE_URL) is HTTPS-only by default; embedded mode serves plain
# http://127.0.0.1, where secure cookies would never come back.
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=not EMBEDDED)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not EMBEDDED)
# kubelet probes and Prometheus speak plain HTTP to the pod.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz(/worker)?$", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("HSTS_SECONDS", default=0 if EMBEDDED else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("HSTS_PRELOAD", default=False)
SILENCED_SYSTEM_CHECKS = []
if not SECURE_HSTS_PRELOAD:
    # Preload is a commitment for the whole registered domain, made on hstspreload.org;
    # the operator opts in with HSTS_PRELOAD=1, so its absence is not a defect here.
    SILENCED_SYSTEM_CHECKS.append("security.W021")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
# A TLS-terminating proxy (ingress, load balancer) that sets X-Forwarded-Proto: https.
# Only behind one: a client reaching gunicorn directly could otherwise claim HTTPS.
if env.bool("BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content-Security-Policy on every response (django-csp). No inline script anywhere: page
# behaviour lives in static/js; htmx's own indicator <style> is off (base.html).
# Styles: the vendored plotly.js (3.7.0) adds two <style> elements when it loads, an
# empty one it fills through CSSOM (allowed) and maplibre's map CSS; these two exact
# bodies are allowed by hash instead of 'unsafe-inline'. A plotly upgrade that changes
# them shows up as a violation in tests/e2e/test_csp_browser.py.
PLOTLY_STYLE_HASHES = [
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",  # "" (plotly.js-style-global)
    "'sha256-V2sIX92Uh6ZaGSFTKMHghsB85b9toJtmazgG09AI2uk='",  # maplibre-gl CSS
]
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, *PLOTLY_STYLE_HASHES],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}

# --- i18n / time ----------------------------------------------------------------------
# English and Simplified Chinese. The language follows the user's preference, else the
# switcher's cookie, else the browser's Accept-Language (console/viewer.py); URLs stay the
# same. The catalogue is locale/zh_Hans/LC_MESSAGES/django.po (glossary: docs/glossary.md).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_NAME = "console_language"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
LANGUAGE_COOKIE_HTTPONLY = True
# Named date formats per language (STAMP_FORMAT ...) in console/formats/<locale>/.
FORMAT_MODULE_PATH = ["console.formats"]
# The server's zone; each viewer sees their browser's zone, or UTC when they toggle it.
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

# --- Static files (served by whitenoise; nothing from a CDN) ---------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = True  # serve straight from static/ when collectstatic has not run
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Celery (CELERY_ namespace; JSON only; never eager) --------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
BROKER_DIR = VAR_DIR / "broker"
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport: one folder of message files both ways, so a web
    # process and a worker process on the same machine share a queue with no server.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        # Broadcast/control exchanges; the default is ./control in the working directory.
        "control_folder": str(BROKER_DIR / "control"),
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Longer than the longest task time limit so a slow task is not redelivered.
        "visibility_timeout": 3600,
        "socket_timeout": 5,
        "socket_connect_timeout": 5,
    }
    # A key prefix lets several consoles (or concurrent test runs) share one Redis
    # database without reading each other's queues.
    if prefix := env.str("CELERY_BROKER_KEY_PREFIX", default=""):
        CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = prefix
CELERY_BROKER_CONNECTION_TIMEOUT = 5
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_CREATE_MISSING_QUEUES = False
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Routes and the beat schedule live in config/celery_routes.py (one place to check).

# --- REST API -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous API call then gets 401 with WWW-Authenticate.
        "console.api_tokens.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["console.permissions.HasConsoleRole"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "console.api.errors.exception_handler",
}
# API tokens (django-rest-knox; console/api_tokens/services.py): hashed at rest, one per client,
# each ending API_TOKEN_TTL_HOURS after it was issued (at most a year). No auto-refresh:
# a token in use would otherwise never end, and a leaked one would live as long as it is
# used; people fetch a new token and revoke the old one instead.
API_TOKEN_TTL_MAX_HOURS = 365 * 24
API_TOKEN_TTL_HOURS = env.int("API_TOKEN_TTL_HOURS", default=30 * 24)
if not 1 <= API_TOKEN_TTL_HOURS <= API_TOKEN_TTL_MAX_HOURS:
    raise ImproperlyConfigured(
        f"API_TOKEN_TTL_HOURS must be between 1 and {API_TOKEN_TTL_MAX_HOURS} (a year); "
        f"it is {API_TOKEN_TTL_HOURS}."
    )
API_TOKEN_LIMIT_PER_USER = env.int("API_TOKEN_LIMIT_PER_USER", default=10)
if API_TOKEN_LIMIT_PER_USER < 1:
    raise ImproperlyConfigured("API_TOKEN_LIMIT_PER_USER must be 1 or more.")
KNOX_TOKEN_MODEL = "console.ApiToken"  # noqa: S105  (a model name)
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=API_TOKEN_TTL_HOURS),
    "TOKEN_LIMIT_PER_USER": API_TOKEN_LIMIT_PER_USER,
    "AUTO_REFRESH": False,
    "AUTH_HEADER_PREFIX": "Token",  # `Authorization: Token <key>`, as before
}
# knox's own migrations would make a table for its default model, unused here (swapped for
# console.ApiToken, whose table console's migrations make).
MIGRATION_MODULES = {"knox": None}
SPECTACULAR_SETTINGS = {
    "TITLE": "LLM incident console API",
    "DESCRIPTION": "Alertmanager ingestion, incidents, timeline and lifecycle.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The schema and its docs page need a console role, like every other page.
    "SERVE_PERMISSIONS": ["console.permissions.HasConsoleRole"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "incidents.api.schema_add_alertmanager_webhook",
    ],
    "ENUM_NAME_OVERRIDES": {
        "IncidentStatusEnum": "incidents.models.IncidentStatus",
        "AlertStatusEnum": "incidents.models.AlertStatus",
        "ActionKindEnum": "actions.serializers.KIND_CHOICES",
        "ActionRunStatusEnum": "actions.models.ActionRunStatus",
        "ActionRunStatusFilterEnum": "actions.serializers.STATUS_FILTER_CHOICES",
        "PostmortemStatusEnum": "postmortems.models.PostmortemStatus",
        "ActionItemStatusEnum": "postmortems.models.ItemStatus",
    },
}

# --- Alert ingestion -----------------------------------------------------------------
# Empty means every webhook is refused (401); embedded mode makes one in var/.
ALERTMANAGER_TOKEN = env.str("ALERTMANAGER_TOKEN", default="")
if not ALERTMANAGER_TOKEN and EMBEDDED:
    ALERTMANAGER_TOKEN = _local_secret("alertmanager_token")
# During a rotation, the token Alertmanager may still send; empty once every Alertmanager
# sends the new one (the webhook's log line says which token each delivery used).
ALERTMANAGER_TOKEN_PREVIOUS = env.str("ALERTMANAGER_TOKEN_PREVIOUS", default="")
WEBHOOK_MAX_BYTES = env.int("WEBHOOK_MAX_BYTES", default=2 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = max(WEBHOOK_MAX_BYTES + 1024, 2_621_440)
# Grouping: empty = Alertmanager's groupKey; otherwise these alert labels, in order.
INCIDENT_GROUP_BY = env.list("INCIDENT_GROUP_BY", default=[])
# A group that fires again within this many seconds of being resolved reopens the same
# incident instead of opening a new one (flapping).
INCIDENT_REOPEN_WINDOW_SECONDS = env.int("INCIDENT_REOPEN_WINDOW_SECONDS", default=1800)
INCIDENT_SEVERITY_MAP = env.dict(
    "INCIDENT_SEVERITY_MAP",
    default={"critical": "SEV1", "error": "SEV2", "warning": "SEV3", "info": "SEV4"},
)
INCIDENT_DEFAULT_SEVERITY = env.str("INCIDENT_DEFAULT_SEVERITY", default="SEV3")
# How long successfully processed webhook bodies are kept; dead letters are kept four times longer.
WEBHOOK_RECEIPT_RETENTION_DAYS = env.int("WEBHOOK_RECEIPT_RETENTION_DAYS", default=14)
# How often list and timeline partials poll for changes, in seconds.
LIVE_REFRESH_SECONDS = env.int("LIVE_REFRESH_SECONDS", default=10)
# Worker liveness (console/heartbeat.py): each worker beats every WORKER_HEARTBEAT_SECONDS;
# none within WORKER_HEARTBEAT_STALE_SECONDS means no worker is alive (/readyz, banner).
WORKER_HEARTBEAT_SECONDS = env.float("WORKER_HEARTBEAT_SECONDS", default=15.0)
WORKER_HEARTBEAT_STALE_SECONDS = env.int("WORKER_HEARTBEAT_STALE_SECONDS", default=60)
# The console's own /metrics (console/metrics/series.py): a bearer token Prometheus must send
# (empty: open), and the port the Celery worker serves its metrics on (0: none).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
WORKER_METRICS_PORT = env.int("WORKER_METRICS_PORT", default=0)

PROMETHEUS_URL = env.str("PROMETHEUS_URL", default="http://127.0.0.1:9090")
PROMETHEUS_TIMEOUT_SECONDS = env.float("PROMETHEUS_TIMEOUT_SECONDS", default=3.0)
TRIAGE_CACHE_SECONDS = env.int("TRIAGE_CACHE_SECONDS", default=10)
# Silences from the incident page go to Alertmanager's v2 API (incidents/silences/client.py).
ALERTMANAGER_URL = env.str("ALERTMANAGER_URL", default="http://127.0.0.1:9093")
ALERTMANAGER_TIMEOUT_SECONDS = env.float("ALERTMANAGER_TIMEOUT_SECONDS", default=3.0)
# The runbook catalogue (YAML); the drill suite points it at a copy with short windows.
RUNBOOKS_CATALOG_DIR = Path(
    env.str("RUNBOOKS_CATALOG_DIR", default=str(BASE_DIR / "runbooks" / "catalog"))
)

# --- Actions, readiness, drills, guard, postmortems, notifications: settings_apps.py ---
from config.settings.apps import *  # noqa: E402, F403

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
