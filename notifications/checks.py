"""Deployment checks of outgoing notifications (`manage.py check --deploy`)."""

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register


@register(Tags.security, deploy=True)
def console_url_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Production sets NOTIFY_CONSOLE_URL: links in notifications must point where
    responders reach the console, not at the last request's Host."""
    url = str(settings.NOTIFY_CONSOLE_URL or "").strip()
    hint = (
        "Set NOTIFY_CONSOLE_URL to the console's address as responders reach it, "
        "e.g. https://console.example.com (docs/notifications.md)."
    )
    if not url:
        return [
            Error(
                "NOTIFY_CONSOLE_URL is not set: links in notifications would follow the "
                "Host of the last request instead of the console's public address.",
                hint=hint,
                id="notifications.E001",
            )
        ]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return [
            Error(
                f"NOTIFY_CONSOLE_URL {url!r} is not an http(s) address.",
                hint=hint,
                id="notifications.E002",
            )
        ]
    return []
