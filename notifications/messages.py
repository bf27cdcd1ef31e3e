"""The words of a notification. `message_build` makes the JSON body stored on the
delivery (what the generic webhook receives); Slack and email are rendered from that
body, so a retry sends exactly what the first attempt did."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from incidents.models import Incident
from notifications.events import Notice
from notifications.links import console_url
from notifications.models import Event

BODY_VERSION = 1


def absolute(path: str, base: str | None = None) -> str:
    """`path` on the console's address (links.console_url unless the caller has it)."""
    return (console_url() if base is None else base) + path


def _incident(incident: Incident | None, base: str) -> dict[str, Any] | None:
    if incident is None:
        return None
    return {
        "id": incident.pk,
        "title": incident.title,
        "severity": incident.severity,
        "status": incident.status,
        "namespace": incident.namespace,
        "runbook": incident.runbook,
        "commander": incident.commander.get_username() if incident.commander else None,
        "is_drill": incident.is_drill,
        "url": absolute(reverse("incidents:detail", args=[incident.pk]), base),
    }


def _summary(notice: Notice, incident: Incident | None, base: str) -> tuple[str, str]:
    """(one line, the page it points at), in the active language."""
    d = notice.details
    if incident is None:
        return _("Test notification from the vLLM Incident Console"), absolute(
            reverse("notifications:list"), base
        )
    ref = _("[%(severity)s] Incident #%(id)s") % {"severity": incident.severity, "id": incident.pk}
    page = reverse("incidents:detail", args=[incident.pk])
    words = {"ref": ref, "title": incident.title}
    match notice.event:
        case Event.INCIDENT_OPENED:
            # "reopened": deliveries recorded before INCIDENT_REOPENED existed.
            if d.get("reopened"):
                line = _("%(ref)s reopened: %(title)s") % words
            else:
                line = _("%(ref)s opened: %(title)s") % words
        case Event.INCIDENT_REOPENED:
            line = _fired_again_line(d, words)
        case Event.SEVERITY_RAISED:
            line = _("%(ref)s severity raised %(old)s → %(new)s: %(title)s") % {
                **words,
                "old": d.get("from"),
                "new": d.get("to"),
            }
        case Event.COMMANDER_CHANGED:
            line = _("%(ref)s is now commanded by %(who)s (was %(was)s): %(title)s") % {
                **words,
                "who": d.get("to") or _("nobody"),
                "was": d.get("from") or _("nobody"),
            }
        case Event.INCIDENT_MITIGATED:
            line = _("%(ref)s mitigated: %(title)s") % words
        case Event.INCIDENT_RESOLVED:
            line = _("%(ref)s resolved: %(title)s") % words
        case Event.APPROVAL_WANTED:
            line = _("%(ref)s: action #%(run)s %(kind)s on %(target)s awaits approval") % {
                **words,
                "run": d.get("run"),
                "kind": d.get("kind"),
                "target": d.get("target"),
            }
            page = reverse("actions:action-run", args=[d.get("run")])
        case Event.POSTMORTEM_IN_REVIEW:
            line = _("Postmortem #%(pm)s of incident #%(id)s is in review: %(title)s") % {
                "pm": d.get("postmortem"),
                "id": incident.pk,
                "title": d.get("title", incident.title),
            }
            page = reverse("postmortems:detail", args=[d.get("postmortem")])
        case Event.ACTION_ITEM_OVERDUE:
            line = _overdue_line(d, incident)
            page = reverse("postmortems:items") + f"?item={d.get('action_item')}"
        case _:
            line = f"{ref}: {notice.event}"
    return " ".join(line.split())[:500], absolute(page, base)  # one line: an email subject


def _fired_again_line(d: dict[str, Any], words: dict[str, str]) -> str:
    by_hand = d.get("reopened_by") == "by_hand"
    if d.get("previous_status") == "mitigated":
        return _("%(ref)s fired again after it was mitigated: %(title)s") % words
    if by_hand:
        return _("%(ref)s reopened by hand after it was resolved: %(title)s") % words
    return _("%(ref)s fired again after it was resolved, so it reopened: %(title)s") % words


def _overdue_line(d: dict[str, Any], incident: Incident) -> str:
    days = d.get("days_overdue")
    return ngettext(
        "Action item #%(item)s is %(days)s day overdue: %(title)s (incident #%(id)s, "
        "owner %(owner)s)",
        "Action item #%(item)s is %(days)s days overdue: %(title)s (incident #%(id)s, "
        "owner %(owner)s)",
        days if isinstance(days, int) else 0,
    ) % {
        "item": d.get("action_item"),
        "days": days,
        "title": d.get("title"),
        "id": incident.pk,
        "owner": d.get("owner") or _("nobody"),
    }


def message_build(
    notice: Notice,
    incident: Incident | None,
    *,
    actor: str | None = None,
    language: str | None = None,
    base_url: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """(summary, body) for one notice, worded in `language` (the target's; default the
    console's). The body records the language so Slack and email, rendered from it at
    send time, and every retry speak the same one. `base_url`: the console's address,
    when the caller looked it up once for many messages (links.console_url)."""
    language = language or settings.LANGUAGE_CODE
    base = console_url() if base_url is None else base_url
    with translation.override(language):
        summary, url = _summary(notice, incident, base)
        event_label = str(Event(notice.event).label)
    body = {
        "version": BODY_VERSION,
        "language": language,
        "event": notice.event,
        "event_label": event_label,
        "id": notice.key,
        "occurred_at": notice.occurred_at.isoformat(),
        "summary": summary,
        "text": notice.text,
        "url": url,
        "actor": actor,
        "incident": _incident(incident, base),
        "details": notice.details,
    }
    return summary, body


def _detail_lines(body: dict[str, Any]) -> list[str]:
    lines = []
    if body.get("text") and body["text"] not in body["summary"]:
        lines.append(body["text"])  # the timeline's stored sentence: never re-translated
    incident = body.get("incident") or {}
    if incident:
        lines.append(
            _(
                "%(severity)s · %(status)s · %(namespace)s · runbook %(runbook)s · "
                "commander %(commander)s"
            )
            % {
                "severity": incident.get("severity"),
                "status": incident.get("status"),
                "namespace": incident.get("namespace") or _("no namespace"),
                "runbook": incident.get("runbook") or _("none"),
                "commander": incident.get("commander") or _("nobody"),
            }
        )
    if body.get("actor"):
        lines.append(_("By %(actor)s") % {"actor": body["actor"]})
    return lines


def _body_language(body: dict[str, Any]) -> str:
    # Bodies recorded before targets had a language carry none: they were English.
    return str(body.get("language") or settings.LANGUAGE_CODE)


def slack_text(body: dict[str, Any]) -> str:
    # Plain text: apprise's Slack plugin escapes &, < and > in it, so "<!channel>" in an
    # alert label cannot ping a whole channel; Slack links the bare URL itself.
    with translation.override(_body_language(body)):
        link = _("Open in the console: %(url)s") % {"url": body["url"]}
        return "\n".join([*_detail_lines(body), link])


def email_text(body: dict[str, Any]) -> str:
    with translation.override(_body_language(body)):
        lines = [body["summary"], "", *_detail_lines(body), "", body["url"], ""]
        lines.append(
            _("Event: %(label)s (%(id)s), %(at)s")
            % {"label": body["event_label"], "id": body["id"], "at": body["occurred_at"]}
        )
        return "\n".join(lines)
