"""The words of a notification. `message_build` makes the JSON body stored on the
delivery (what the generic webhook receives); Slack and email are rendered from that
body, so a retry sends exactly what the first attempt did."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from console.texts import Msg, msg, render
from incidents.models import Incident
from incidents.transitions import status_word
from notifications.events import Notice
from notifications.links import console_url
from notifications.models import Event

BODY_VERSION = 1
SUMMARY_MAX = 500  # Delivery.summary


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


def _summary(notice: Notice, incident: Incident | None, base: str) -> tuple[Msg, str]:
    """(one line, the page it points at): the line as parts, worded when read."""
    d = notice.details
    if incident is None:
        return msg("notifications.summary.test"), absolute(reverse("notifications:list"), base)
    ref = msg("notifications.summary.ref", severity=incident.severity, id=incident.pk)
    page = reverse("incidents:detail", args=[incident.pk])
    # One line (an email subject): a title typed over several lines is joined.
    words: dict[str, Any] = {"ref": ref, "title": _one_line(incident.title)}
    match notice.event:
        case Event.INCIDENT_OPENED:
            # "reopened": deliveries recorded before INCIDENT_REOPENED existed.
            key = "reopened" if d.get("reopened") else "opened"
            line = msg(f"notifications.summary.{key}", **words)
        case Event.INCIDENT_REOPENED:
            line = _fired_again_line(d, words)
        case Event.SEVERITY_RAISED:
            line = msg(
                "notifications.summary.severity_raised",
                **words,
                old=_scalar(d.get("from")),
                new=_scalar(d.get("to")),
            )
        case Event.COMMANDER_CHANGED:
            line = msg(
                "notifications.summary.commander_changed",
                **words,
                who=_scalar(d.get("to")) or msg("notifications.nobody"),
                was=_scalar(d.get("from")) or msg("notifications.nobody"),
            )
        case Event.INCIDENT_MITIGATED:
            line = msg("notifications.summary.mitigated", **words)
        case Event.INCIDENT_RESOLVED:
            line = msg("notifications.summary.resolved", **words)
        case Event.APPROVAL_WANTED:
            line = msg(
                "notifications.summary.approval_wanted",
                **words,
                run=_scalar(d.get("run")),
                kind=_scalar(d.get("kind")),
                target=_scalar(d.get("target")),
            )
            page = reverse("actions:action-run", args=[d.get("run")])
        case Event.POSTMORTEM_IN_REVIEW:
            line = msg(
                "notifications.summary.postmortem_in_review",
                pm=_scalar(d.get("postmortem")),
                id=incident.pk,
                title=_one_line(str(d.get("title", incident.title))),
            )
            page = reverse("postmortems:detail", args=[d.get("postmortem")])
        case Event.ACTION_ITEM_OVERDUE:
            line = _overdue_line(d, incident)
            page = reverse("postmortems:items") + f"?item={d.get('action_item')}"
        case _:
            line = msg("notifications.summary.other", ref=ref, event=notice.event)
    return line, absolute(page, base)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _scalar(value: Any) -> Any:
    """A detail as a parameter: scalars as they are, anything else as its text."""
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _fired_again_line(d: dict[str, Any], words: dict[str, Any]) -> Msg:
    if d.get("previous_status") == "mitigated":
        return msg("notifications.summary.fired_again_mitigated", **words)
    if d.get("reopened_by") == "by_hand":
        return msg("notifications.summary.reopened_by_hand", **words)
    return msg("notifications.summary.fired_again_resolved", **words)


def _overdue_line(d: dict[str, Any], incident: Incident) -> Msg:
    days = d.get("days_overdue")
    return msg(
        "notifications.summary.action_item_overdue",
        item=_scalar(d.get("action_item")),
        days=days if isinstance(days, int) else 0,
        title=_one_line(str(d.get("title") or "")),
        id=incident.pk,
        owner=_scalar(d.get("owner")) or msg("notifications.nobody"),
    )


def _text_in(notice: Notice, language: str) -> str:
    """The timeline's own sentence in the target's language when it was stored as parts
    (as stored otherwise: a person's words are never re-translated)."""
    return render(notice.text_msg, fallback=notice.text, language=language)


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
    send time, and every retry speak the same one; it keeps the summary's parts in
    `summary_msg` (the delivery's `texts["summary"]`) for the pages. `base_url`: the
    console's address, when the caller looked it up once for many messages
    (links.console_url)."""
    language = language or settings.LANGUAGE_CODE
    base = console_url() if base_url is None else base_url
    line, url = _summary(notice, incident, base)
    summary = render(line.stored, language=language, fallback=line.english)[:SUMMARY_MAX]
    with translation.override(language):
        event_label = str(Event(notice.event).label)
    body = {
        "version": BODY_VERSION,
        "language": language,
        "event": notice.event,
        "event_label": event_label,
        "id": notice.key,
        "occurred_at": notice.occurred_at.isoformat(),
        "summary": summary,
        # What the summary and the text say, as parts: the console's pages word them in
        # their reader's language; what is sent stays in the target's.
        "summary_msg": line.stored,
        "text": _text_in(notice, language),
        "text_msg": notice.text_msg,
        "url": url,
        "actor": actor,
        "incident": _incident(incident, base),
        "details": notice.details,
    }
    return summary, body


def summary_texts(body: dict[str, Any]) -> dict[str, Any]:
    """A delivery's `texts`: the summary's parts, for the deliveries page and the API."""
    return {"summary": body["summary_msg"]}


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
                # The word in the body's language (the stored value when unknown).
                "status": str(status_word(str(incident.get("status") or ""))),
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
