"""Small display filters for the console pages. Every filter returns plain text (autoescaped
by the template), never markup, so user data can pass through them safely."""

from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django import template
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy

from incidents.models import IncidentStatus
from incidents.silences.comments import comment_shown
from incidents.timeline_text import timeline_text

register = template.Library()


def _compact(delta: timedelta) -> str:
    seconds = int(abs(delta.total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    # Unit letters are words too: a Chinese page says "3分12秒", not "3m 12s".
    if days:
        return _("%(days)sd %(hours)sh") % {"days": days, "hours": hours}
    if hours:
        return _("%(hours)sh %(minutes)sm") % {"hours": hours, "minutes": minutes}
    if minutes:
        return _("%(minutes)sm %(seconds)ss") % {"minutes": minutes, "seconds": secs}
    return _("%(seconds)ss") % {"seconds": secs}


@register.filter
def duration(later: datetime | None, earlier: datetime | None) -> str:
    """`{{ inc.acknowledged_at|duration:inc.triggered_at }}` -> "3m 12s"."""
    if not later or not earlier:
        return ""
    return _compact(later - earlier)


def _coarse(delta: timedelta) -> str:
    seconds = int(abs(delta.total_seconds()))
    if seconds < 60:
        return _("%(seconds)ss") % {"seconds": seconds}
    if seconds < 3600:
        return _("%(minutes)sm") % {"minutes": seconds // 60}
    return _compact(delta)  # "2h 5m", "3d 4h"


@register.filter
def ago(value: datetime | None) -> str:
    """Relative time for lists: "45s ago", "12m ago", "2h 5m ago" ("in 2m" if ahead)."""
    if not value:
        return ""
    delta = timezone.now() - value
    if delta.total_seconds() < 0:
        return _("in %(time)s") % {"time": _coarse(delta)}
    return _("%(time)s ago") % {"time": _coarse(delta)}


@register.filter
def status_label(value: str) -> str:
    """An incident status value as its label in the page's language ("mitigated" ->
    "Mitigated"); stored payloads keep the value, only the page translates it."""
    try:
        return str(IncidentStatus(value).label)
    except ValueError:
        return value


# Alertmanager's silence states; anything else it may add shows as sent.
_SILENCE_STATES = {
    "active": pgettext_lazy("silence state", "active"),
    "pending": pgettext_lazy("silence state", "pending"),
    "expired": pgettext_lazy("silence state", "expired"),
}


# Who wrote a timeline entry that has no person (TimelineEvent.source): stored ids.
_SOURCES = {
    "system": pgettext_lazy("timeline source", "system"),
    "alertmanager": pgettext_lazy("timeline source", "Alertmanager"),
    "console": pgettext_lazy("timeline source", "console"),
    "slack": pgettext_lazy("timeline source", "Slack"),
    "mattermost": pgettext_lazy("timeline source", "Mattermost"),
    "pager": pgettext_lazy("timeline source", "pager"),
    "auto-triage": pgettext_lazy("timeline source", "auto-triage"),
    "worker": pgettext_lazy("timeline source", "worker"),
}


@register.filter
def source_label(value: str) -> str:
    """A timeline source in the viewer's words; "" for one this version does not know
    (the page shows its id as code)."""
    label = _SOURCES.get(value)
    return str(label) if label is not None else ""


@register.filter
def silence_comment(value: str) -> str:
    """The console's default silence comment in the viewer's language; a person's as is."""
    return comment_shown(value)


@register.filter
def silence_state(value: str) -> str:
    label = _SILENCE_STATES.get(value)
    return str(label) if label is not None else value


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


@register.filter
def timeline_line(event) -> str:
    """The event's message in the viewer's language where the console wrote it
    (incidents/timeline_text.py); as stored otherwise."""
    return timeline_text(event.kind, event.message, event.payload)


@register.filter
def declared(incident) -> bool:
    """Declared by hand (services/declare.py), not opened by an alert: its page says
    "the incident", never "the alert", where it explains labels."""
    from incidents.services.declare import GROUPING_PREFIX

    return str(getattr(incident, "grouping_key", "") or "").startswith(GROUPING_PREFIX)
