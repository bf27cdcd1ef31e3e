"""Filters the pager's templates share: the badge class of a state (the console's outcome
colours: green done, blue on its way, orange waiting, red failed, grey not needed), a
length of time in words, and dates in the pager's translatable formats."""

from __future__ import annotations

from datetime import date, datetime

from django import template
from django.utils import dateformat
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext_lazy

from pager.escalation.timeline import stop_reason_words
from pager.models import DeliveryState, EscalationState, HeartbeatState, PageStatus
from pager.paging.methods import contact_test_words
from pager.texts import delivery_error

register = template.Library()

BADGES: dict[str, dict[str, str]] = {
    "page": {
        PageStatus.PENDING: "outcome-failed",
        PageStatus.DELIVERED: "outcome-replayed",
        PageStatus.FAILED: "outcome-rejected",
        PageStatus.ACKNOWLEDGED: "outcome-accepted",
    },
    "delivery": {
        DeliveryState.PENDING: "pg-grey",
        DeliveryState.SENDING: "outcome-replayed",
        DeliveryState.SENT: "outcome-accepted",
        DeliveryState.FAILED: "outcome-rejected",
        DeliveryState.UNKNOWN: "outcome-failed",
        DeliveryState.SKIPPED: "pg-grey",
    },
    "heartbeat": {
        HeartbeatState.WAITING: "outcome-failed",
        HeartbeatState.OK: "outcome-accepted",
        HeartbeatState.MISSING: "outcome-rejected",
    },
    "escalation": {
        EscalationState.ACTIVE: "outcome-rejected",
        EscalationState.ACKNOWLEDGED: "outcome-accepted",
        EscalationState.SUPPRESSED: "outcome-replayed",
        EscalationState.EXHAUSTED: "outcome-failed",
        EscalationState.STOPPED: "pg-grey",
    },
}


@register.filter
def badge(state: str, kind: str) -> str:
    """`{{ page.status|badge:"page" }}`: the CSS class of that state's badge."""
    return BADGES.get(kind, {}).get(state, "pg-grey")


@register.filter
def seconds_words(seconds: int | float | None) -> str:
    """300 -> "5 min", 90 -> "90 s", 7200 -> "2 h"."""
    if seconds is None:
        return ""
    value = int(seconds)
    if value and value % 3600 == 0:
        return ngettext("%(n)d hour", "%(n)d hours", value // 3600) % {"n": value // 3600}
    if value >= 120 and value % 60 == 0:
        return _("%(n)d min") % {"n": value // 60}
    return _("%(n)d s") % {"n": value}


# Date formats the pager's pages print, each a translatable Django date format (Chinese
# puts the month and day first: "12月7日 星期一 09:00"). Aware values are shown in the
# active time zone, as the `date` filter does (expects_localtime).
_WHEN = {
    "when": pgettext_lazy("pager date format: weekday, day, month, time", "D j M H:i"),
    "when_s": pgettext_lazy("pager date format: with seconds", "D j M H:i:s"),
    "day": pgettext_lazy("pager date format: weekday, day, month", "D j M"),
    "day_y": pgettext_lazy("pager date format: weekday, day, month, year", "D j M Y"),
}


def _format(value: datetime | date | None, which: str) -> str:
    if not value:
        return ""
    return dateformat.format(value, str(_WHEN[which]))


@register.filter(expects_localtime=True)
def when(value: datetime | None) -> str:
    return _format(value, "when")


@register.filter(expects_localtime=True)
def when_s(value: datetime | None) -> str:
    return _format(value, "when_s")


@register.filter(expects_localtime=True)
def day(value: date | None) -> str:
    return _format(value, "day")


@register.filter(expects_localtime=True)
def day_y(value: date | None) -> str:
    return _format(value, "day_y")


@register.filter
def stop_reason(reason: str) -> str:
    """An escalation's stored (English) stop reason in the page's language."""
    return stop_reason_words(reason)


@register.filter
def delivery_error_words(error: str) -> str:
    """A delivery's stored error: the pager's own in the page's language, a service's as
    it answered."""
    return str(delivery_error(error or ""))


@register.filter
def test_result(result: str) -> str:
    """A contact method's stored test outcome in the page's language."""
    found = contact_test_words(result or "")
    return str(found) if found is not None else (result or "")


# What feeds a console heartbeat (pager/heartbeats/console.py): Heartbeat.source ids.
_BEAT_SOURCE = pgettext_lazy("heartbeat source", "Celery beat (the periodic scheduler)")
_WORKER_SOURCE = pgettext_lazy("heartbeat source", "Celery workers of queue %(queue)s")


@register.filter
def heartbeat_source(source: str) -> str:
    """A console heartbeat's source in the viewer's words; "" for any other (a Watchdog's
    replica URL: shown as written)."""
    if source == "beat":
        return str(_BEAT_SOURCE)
    if source.startswith("worker:"):
        queue = format_html("<code>{}</code>", source.removeprefix("worker:"))
        return mark_safe(conditional_escape(str(_WORKER_SOURCE)) % {"queue": queue})  # noqa: S308
    return ""
