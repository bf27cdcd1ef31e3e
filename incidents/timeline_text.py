"""A timeline line in the viewer's language.

Entries are stored in English, and a line the console writes now also keeps what it
said as parts (`payload["msg"]`, console/texts/): those are worded in the viewer's
language. For lines written before that, a line the console wrote in a known shape (the
opening, the alerts listed per delivery, a status change without a person's reason) is
worded again at display time from its kind and payload; anything else, notes and reasons
people typed in particular, is shown exactly as stored. Other apps add their kinds with
`timeline_text_register`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.translation import get_language, gettext, ngettext

from console.texts import render
from incidents.models import TimelineEventType as K

# (message, payload) -> the line in the active language, or None to show it as stored.
Rewording = Callable[[str, dict[str, Any]], "str | None"]
_REWORDINGS: dict[str, Rewording] = {}

OPENED_PREFIX = "Incident opened: "
_STATUS_LINES = {
    "acknowledged": lambda: gettext("Incident acknowledged."),
    "mitigated": lambda: gettext("Incident mitigated."),
    "resolved": lambda: gettext("Incident resolved."),
    "re-triggered": lambda: gettext("Incident re-triggered."),
    "reopened": lambda: gettext("Incident reopened."),
}
# The reasons the ingestion writes itself (incidents/ingest/decide.py).
_SYSTEM_REASONS = {
    "All alerts resolved; mitigated until a person resolves it.": lambda: gettext(
        "All alerts resolved; mitigated until a person resolves it."
    ),
    "Alerts are firing again.": lambda: gettext("Alerts are firing again."),
}


def timeline_text_register(kind: str, reword: Rewording) -> None:
    _REWORDINGS[kind] = reword


def timeline_text(kind: str, message: str, payload: dict[str, Any] | None) -> str:
    if not message or (get_language() or "en").startswith("en"):
        return message
    if payload and payload.get("msg"):
        return render(payload["msg"], fallback=message)
    reword = _REWORDINGS.get(kind)
    if reword is None:
        return message
    return reword(message, payload or {}) or message


def _opened(message: str, payload: dict[str, Any]) -> str | None:
    if not message.startswith(OPENED_PREFIX):
        return None
    return gettext("Incident opened: %(title)s") % {"title": message[len(OPENED_PREFIX) :]}


def _alerts(verb: str) -> Rewording:
    def reword(message: str, payload: dict[str, Any]) -> str | None:
        count = payload.get("count")
        names = ", ".join(sorted({str(a.get("alertname", "")) for a in payload.get("alerts", [])}))
        plural = "s" if count != 1 else ""
        if not isinstance(count, int) or message != f"{count} alert{plural} {verb}: {names}":
            return None  # not the line the ingestion writes: show it as stored
        params = {"count": count, "names": names}
        if verb == "firing":
            return (
                ngettext(
                    "%(count)s alert firing: %(names)s", "%(count)s alerts firing: %(names)s", count
                )
                % params
            )
        return (
            ngettext(
                "%(count)s alert resolved: %(names)s", "%(count)s alerts resolved: %(names)s", count
            )
            % params
        )

    return reword


def _status(message: str, payload: dict[str, Any]) -> str | None:
    verb = str(payload.get("verb", ""))
    if verb in _STATUS_LINES and message == f"Incident {verb}.":
        return _STATUS_LINES[verb]()
    if message in _SYSTEM_REASONS:
        return _SYSTEM_REASONS[message]()
    return None


timeline_text_register(K.INCIDENT_OPENED, _opened)
timeline_text_register(K.ALERT_FIRED, _alerts("firing"))
timeline_text_register(K.ALERT_RESOLVED, _alerts("resolved"))
timeline_text_register(K.STATUS_CHANGED, _status)
