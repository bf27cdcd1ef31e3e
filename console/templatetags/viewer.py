"""Template helpers for what depends on the viewer: role names in their language, and
the time zone their times are shown in."""

from django import template
from django.utils.translation import pgettext_lazy

from console.viewer import wants_utc

register = template.Library()

# The role group names are stored English identifiers; this is how they read.
ROLE_LABELS = {
    "viewer": pgettext_lazy("role", "viewer"),
    "responder": pgettext_lazy("role", "responder"),
    "commander": pgettext_lazy("role", "commander"),
    "admin": pgettext_lazy("role", "admin"),
}


@register.filter
def role_label(role: str) -> str:
    return str(ROLE_LABELS.get(role, role))


@register.simple_tag(takes_context=True)
def viewer_wants_utc(context) -> bool:
    """Whether the viewer toggled UTC (not merely a browser that runs in UTC)."""
    request = context.get("request")
    return request is not None and wants_utc(request)
