"""The JSON API (/api/): Django REST framework, its API tokens (django-rest-knox) and
its OpenAPI schema (drf-spectacular)."""

from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env

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
        "pager.heartbeats.schema.schema_add_heartbeat_beat",
    ],
    "ENUM_NAME_OVERRIDES": {
        "IncidentStatusEnum": "incidents.models.IncidentStatus",
        "AlertStatusEnum": "incidents.models.AlertStatus",
        "ActionKindEnum": "actions.serializers.KIND_CHOICES",
        "ActionRunStatusEnum": "actions.models.ActionRunStatus",
        "ActionRunStatusFilterEnum": "actions.serializers.STATUS_FILTER_CHOICES",
        "PostmortemStatusEnum": "postmortems.models.PostmortemStatus",
        "ActionItemStatusEnum": "postmortems.models.ItemStatus",
        "ContactKindEnum": "pager.models.ContactKind",
        "HeartbeatKindEnum": "pager.models.HeartbeatKind",
        "HeartbeatStateEnum": "pager.models.HeartbeatState",
        "PageDeliveryStateEnum": "pager.models.DeliveryState",
        "SwapStateEnum": "pager.models.SwapState",
        "EscalationStateEnum": "pager.models.EscalationState",
        "PageStatusEnum": "pager.models.PageStatus",
        "OverrideSourceEnum": "pager.models.OverrideSource",
    },
}
