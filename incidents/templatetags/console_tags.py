"""Small display filters for the console pages. Every filter returns plain text (autoescaped
by the template), never markup, so user data can pass through them safely."""

from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django import template
from django.utils import timezone

register = template.Library()


def _compact(delta: timedelta) -> str:
    seconds = int(abs(delta.total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


@register.filter
def duration(later: datetime | None, earlier: datetime | None) -> str:
    """`{{ inc.acknowledged_at|duration:inc.triggered_at }}` -> "3m 12s"."""
    if not later or not earlier:
        return ""
    return _compact(later - earlier)


def _coarse(delta: timedelta) -> str:
    seconds = int(abs(delta.total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return _compact(delta)  # "2h 5m", "3d 4h"


@register.filter
def ago(value: datetime | None) -> str:
    """Relative time for lists: "45s ago", "12m ago", "2h 5m ago" ("in 2m" if ahead)."""
    if not value:
        return ""
    delta = timezone.now() - value
    if delta.total_seconds() < 0:
        return f"in {_coarse(delta)}"
    return f"{_coarse(delta)} ago"


@register.filter
def sorted_items(mapping) -> list[tuple[str, object]]:
    """Items of a dict sorted by key. Use instead of `.items` in templates, which a label
    that happens to be called "items" would shadow."""
    if not isinstance(mapping, dict):
        return []
    return sorted(mapping.items(), key=lambda kv: str(kv[0]))


@register.filter
def get(mapping, key):
    """`{{ alert.labels|get:"pod" }}`: a dict lookup that ignores attributes."""
    if isinstance(mapping, dict):
        return mapping.get(key, "")
    return ""


@register.filter
def http_url(value) -> str:
    """The URL if it is http(s), else "" (never a javascript: or data: link)."""
    if not isinstance(value, str):
        return ""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return ""
    if parts.scheme.lower() in ("http", "https") and parts.netloc:
        return value.strip()
    return ""
