"""The words of a notification. `message_build` makes the JSON body stored on the
delivery (what the generic webhook receives); Slack and email are rendered from that
body, so a retry sends exactly what the first attempt did."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse

from incidents.models import Incident
from notifications.events import Notice
from notifications.models import Event

BODY_VERSION = 1


def absolute(path: str) -> str:
    return settings.NOTIFY_CONSOLE_URL.rstrip("/") + path


def _incident(incident: Incident | None) -> dict[str, Any] | None:
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
        "url": absolute(reverse("incidents:detail", args=[incident.pk])),
    }


def _summary(notice: Notice, incident: Incident | None) -> tuple[str, str]:
    """(one line, the page it points at)."""
    d = notice.details
    if incident is None:
        return "Test notification from the vLLM Incident Console", absolute(
            reverse("notifications:list")
        )
    ref = f"[{incident.severity}] Incident #{incident.pk}"
    page = reverse("incidents:detail", args=[incident.pk])
    title = incident.title
    match notice.event:
        case Event.INCIDENT_OPENED:
            line = f"{ref} {'reopened' if d.get('reopened') else 'opened'}: {title}"
        case Event.SEVERITY_RAISED:
            line = f"{ref} severity raised {d.get('from')} → {d.get('to')}: {title}"
        case Event.COMMANDER_CHANGED:
            who = d.get("to") or "nobody"
            line = f"{ref} is now commanded by {who} (was {d.get('from') or 'nobody'}): {title}"
        case Event.INCIDENT_MITIGATED:
            line = f"{ref} mitigated: {title}"
        case Event.INCIDENT_RESOLVED:
            line = f"{ref} resolved: {title}"
        case Event.APPROVAL_WANTED:
            line = (
                f"{ref}: action #{d.get('run')} {d.get('kind')} on {d.get('target')} "
                "awaits approval"
            )
            page = reverse("runbooks:action-run", args=[d.get("run")])
        case Event.POSTMORTEM_IN_REVIEW:
            line = (
                f"Postmortem #{d.get('postmortem')} of incident #{incident.pk} is in review: "
                f"{d.get('title', title)}"
            )
            page = reverse("postmortems:detail", args=[d.get("postmortem")])
        case Event.ACTION_ITEM_OVERDUE:
            days = d.get("days_overdue")
            line = (
                f"Action item #{d.get('action_item')} is {days} day{'s' if days != 1 else ''} "
                f"overdue: {d.get('title')} (incident #{incident.pk}, owner "
                f"{d.get('owner') or 'nobody'})"
            )
            page = reverse("postmortems:items") + f"?item={d.get('action_item')}"
        case _:
            line = f"{ref}: {notice.event}"
    return " ".join(line.split())[:500], absolute(page)  # one line: it is an email subject


def message_build(
    notice: Notice, incident: Incident | None, *, actor: str | None = None
) -> tuple[str, dict[str, Any]]:
    """(summary, body) for one notice."""
    summary, url = _summary(notice, incident)
    body = {
        "version": BODY_VERSION,
        "event": notice.event,
        "event_label": Event(notice.event).label,
        "id": notice.key,
        "occurred_at": notice.occurred_at.isoformat(),
        "summary": summary,
        "text": notice.text,
        "url": url,
        "actor": actor,
        "incident": _incident(incident),
        "details": notice.details,
    }
    return summary, body


def _detail_lines(body: dict[str, Any]) -> list[str]:
    lines = []
    if body.get("text") and body["text"] not in body["summary"]:
        lines.append(body["text"])
    incident = body.get("incident") or {}
    if incident:
        where = incident.get("namespace") or "no namespace"
        lines.append(
            f"{incident.get('severity')} · {incident.get('status')} · {where} · "
            f"runbook {incident.get('runbook') or 'none'} · commander "
            f"{incident.get('commander') or 'nobody'}"
        )
    if body.get("actor"):
        lines.append(f"By {body['actor']}")
    return lines


def slack_text(body: dict[str, Any]) -> str:
    # Plain text: apprise's Slack plugin escapes &, < and > in it, so "<!channel>" in an
    # alert label cannot ping a whole channel; Slack links the bare URL itself.
    return "\n".join([*_detail_lines(body), f"Open in the console: {body['url']}"])


def email_text(body: dict[str, Any]) -> str:
    lines = [body["summary"], "", *_detail_lines(body), "", body["url"], ""]
    lines.append(f"Event: {body['event_label']} ({body['id']}), {body['occurred_at']}")
    return "\n".join(lines)
