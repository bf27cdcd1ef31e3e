"""The words of a page, in the paged person's language (their console preference, else
the console's): a title and full text for push, chat and email, one short line for SMS
(under 160 characters, ASCII where the text allows, the link whole), a sentence to be
read aloud for a call, and the JSON body of a webhook.

Alert labels reach these texts (the title, namespace, model): they are sent as plain
text (apprise escapes them for services with markup, see methods.apprise_url) and
mentions that would page a whole Slack channel are broken here as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from console.preferences.services import preference_get
from incidents.models import Incident
from notifications.links import console_url
from pager.models import ContactMethod, Page
from pager.paging.methods import KIND_WORDS, address_masked

SMS_MAX = 159  # one SMS segment holds 160 GSM characters
BODY_VERSION = 1
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# "<!channel>", "<!here>", "@channel", "@here", "@everyone": a zero-width space after the
# first character keeps the words readable and stops the mention.
_MENTION = re.compile(r"(<!|@)(channel|here|everyone)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PageText:
    title: str  # one line: push title, email subject
    text: str  # push body, chat message, email body
    short: str  # SMS
    spoken: str  # a voice call
    data: dict[str, Any] = field(default_factory=dict)  # the webhook's JSON body


def plain(text: str, *, one_line: bool = True) -> str:
    """Label text made safe to show anywhere: no control characters, no mentions."""
    text = _CONTROL.sub(" ", str(text or ""))
    text = _MENTION.sub(lambda m: f"{m.group(1)}\u200b{m.group(2)}", text)
    return " ".join(text.split()) if one_line else text


def chosen_language(user: User | None) -> str | None:
    """The language the person chose in the console, or None."""
    pref = preference_get(user=user) if user is not None else None
    return (pref.language if pref is not None else "") or None


def language_of(user: User | None) -> str:
    return chosen_language(user) or settings.LANGUAGE_CODE


def _what(incident: Incident) -> str:
    """ "VLLMHighTTFT llm-prod/vllm-chat": the alert and where it fires."""
    labels = incident.group_labels or {}
    name = labels.get("alertname") or incident.title.split(":", 1)[0]
    group = labels.get("lws") or labels.get("model_name") or labels.get("model") or ""
    where = "/".join(str(p) for p in (incident.namespace, group) if p)
    return plain(f"{name} {where}".strip())


def _fit(head: str, middle: str, tail: str, limit: int) -> str:
    """head + middle + tail in `limit` characters, shortening the middle first."""
    room = limit - len(head) - len(tail)
    if len(middle) > room:
        middle = middle[: room - 3] + "..." if room > 3 else ""
    return f"{head}{middle}{tail}"


def page_text(page: Page, *, ack_url: str, base_url: str | None = None) -> PageText:
    """The page's words. `page` has its incident and user loaded."""
    incident, user = page.incident, page.user
    base = console_url() if base_url is None else base_url
    incident_url = base + reverse("incidents:detail", args=[incident.pk])
    ttl = timedelta(seconds=settings.PAGE_ACK_LINK_TTL_SECONDS)
    expires = timezone.now() + ttl
    language = language_of(user)
    sev, title = incident.severity, plain(incident.title)
    with translation.override(language):
        status = str(incident.get_status_display())
        head = f"[{sev}] #{incident.pk} "
        # ASCII only: one non-GSM character (an em dash) makes the SMS a 70-character one.
        tail = " - " + _("ack: %(link)s") % {"link": ack_url}
        short = _fit(head, _what(incident), tail, SMS_MAX)
        full_title = _("[%(severity)s] Incident #%(id)s: %(title)s") % {
            "severity": sev,
            "id": incident.pk,
            "title": title,
        }
        lines = [
            _("You are paged for incident #%(id)s.") % {"id": incident.pk},
            title,
            _("Severity %(severity)s · status %(status)s") % {"severity": sev, "status": status},
            _("Namespace: %(namespace)s · runbook: %(runbook)s")
            % {
                "namespace": plain(incident.namespace) or _("none"),
                "runbook": plain(incident.runbook) or _("none"),
            },
            "",
            _("Open the incident: %(url)s") % {"url": incident_url},
            _("Acknowledge with one tap: %(url)s") % {"url": ack_url},
            _("(the link works once, for %(hours)s h)")
            % {"hours": f"{ttl.total_seconds() / 3600:g}"},
        ]
        spoken = _(
            "Incident %(id)s, severity %(severity)s: %(what)s. Open the console or the "
            "link in your messages to acknowledge."
        ) % {"id": incident.pk, "severity": sev, "what": _what(incident)}
    data = {
        "version": BODY_VERSION,
        "event": "page",
        "language": language,
        "page": {
            "id": page.pk,
            "key": page.key,
            "step": page.step_position,
            "loop": page.loop,
            "round": page.repage_round,
        },
        "recipient": user.get_username() if user is not None else None,
        "incident": {
            "id": incident.pk,
            "title": incident.title,
            "severity": sev,
            "status": incident.status,
            "namespace": incident.namespace,
            "runbook": incident.runbook,
            "url": incident_url,
        },
        "ack_url": ack_url,
        "ack_expires_at": expires.isoformat(),
        "title": full_title,
        "text": "\n".join(lines),
    }
    return PageText(full_title, "\n".join(lines), short, spoken, data)


def test_text(method: ContactMethod) -> PageText:
    """The Test button's message: says what it is and that nothing needs doing."""
    user = method.user
    with translation.override(language_of(user)):
        title = _("Test page from the vLLM Incident Console")
        text = _(
            "This is a test of your contact method %(method)s (%(address)s). Pages for "
            "incidents will arrive like this. Nothing needs doing."
        ) % {
            "method": method.label or KIND_WORDS.get(method.kind, method.kind),
            "address": address_masked(method.kind, method.address),
        }
        short = _("Test page from the vLLM Incident Console. Nothing needs doing.")
    data = {
        "version": BODY_VERSION,
        "event": "page.test",
        "recipient": user.get_username(),
        "title": title,
        "text": text,
    }
    return PageText(title, text, short, short, data)
