"""`/incident`'s grammar, shared by every surface: the text after the command becomes an
action name (chatops/actions.py) and its arguments. Pure: no query, no call.

    /incident declare SEV2 <title>
    /incident status [#id]
    /incident note [#id] <text>        (#id may be left out in an incident's own channel)
    /incident page <team-slug> [#id] <message>
    /incident help                     (also the empty text)
"""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext, gettext_lazy, gettext_noop

from console.errors import DomainError

SEVERITIES = ("SEV1", "SEV2", "SEV3", "SEV4")
TITLE_MAX = 200  # incidents.services.declare.TITLE_MAX_CHARS
MESSAGE_MAX = 500  # a page's message (pager.paging.services.manual)
TEXT_MAX = 10_000  # a note (incidents.services.lifecycle.NOTE_MAX_CHARS)
_ID = re.compile(r"#(\S*)")
_SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")

USAGE = gettext_lazy(
    "Usage:\n"
    "/incident declare SEV1|SEV2|SEV3|SEV4 <title> - declare an incident\n"
    "/incident status [#id] - an incident's state, or the open incidents\n"
    "/incident note [#id] <text> - add a note to an incident's timeline\n"
    "/incident page <team> [#id] <message> - page a team's on-call\n"
    "/incident help - this text"
)


class CommandError(DomainError):
    """What is wrong with the command's text; the message ends with the usage. English
    in str() (logs), the reader's language in translated()."""

    code = "invalid_command"

    def __init__(self, message: str, *, params: dict[str, object] | None = None) -> None:
        super().__init__(
            gettext_noop("%(problem)s\n\n%(usage)s"),
            params={"problem": _Problem(message, params or {}), "usage": USAGE},
        )


class _Problem:
    """The first part of a CommandError: formatted when the error is (str() in English,
    translated() in the active language), like a lazy string."""

    def __init__(self, message: str, params: dict[str, object]) -> None:
        self.message, self.params = message, params

    def __str__(self) -> str:
        return gettext(self.message) % self.params if self.params else gettext(self.message)


def _incident_id(token: str) -> int:
    match = _ID.fullmatch(token)
    number = match.group(1) if match else ""
    if not number.isdigit() or int(number) < 1 or len(number) > 12:
        raise CommandError(
            gettext_noop("%(token)s is not an incident number; write it as #42."),
            params={"token": token[:20]},
        )
    return int(number)


def _split(text: str) -> tuple[str, str]:
    """The first word and the rest (whitespace collapsed at the edges only)."""
    parts = text.strip().split(None, 1)
    if not parts:
        return "", ""
    return parts[0], parts[1].strip() if len(parts) > 1 else ""


def _declare(rest: str) -> tuple[str, dict[str, Any]]:
    severity, title = _split(rest)
    if not severity:
        raise CommandError(gettext_noop("declare needs a severity and a title."))
    if severity.upper() not in SEVERITIES:
        raise CommandError(
            gettext_noop("%(severity)s is not a severity; use SEV1, SEV2, SEV3 or SEV4."),
            params={"severity": severity[:20]},
        )
    if not title:
        raise CommandError(gettext_noop("declare needs a title after the severity."))
    if len(title) > TITLE_MAX:
        raise CommandError(
            gettext_noop("The title is longer than %(limit)s characters."),
            params={"limit": TITLE_MAX},
        )
    return "declare", {"severity": severity.upper(), "title": title}


def _status(rest: str) -> tuple[str, dict[str, Any]]:
    if not rest:
        return "status", {}
    first, more = _split(rest)
    if more:
        raise CommandError(gettext_noop("status takes one incident number at most."))
    return "status", {"incident": _incident_id(first)}


def _note(rest: str) -> tuple[str, dict[str, Any]]:
    first, more = _split(rest)
    args: dict[str, Any] = {}
    text = rest
    if first.startswith("#"):
        args["incident"] = _incident_id(first)
        text = more
    if not text:
        raise CommandError(gettext_noop("note needs the text of the note."))
    if len(text) > TEXT_MAX:
        raise CommandError(
            gettext_noop("The note is longer than %(limit)s characters."),
            params={"limit": TEXT_MAX},
        )
    return "note", {**args, "text": text}


def _page(rest: str) -> tuple[str, dict[str, Any]]:
    team, more = _split(rest)
    if not team:
        raise CommandError(gettext_noop("page needs a team and a message."))
    if team.startswith("#") or not _SLUG.fullmatch(team):
        raise CommandError(
            gettext_noop("%(team)s is not a team's slug (letters, digits, - and _)."),
            params={"team": team[:40]},
        )
    args: dict[str, Any] = {"team": team.lower()}
    first, after = _split(more)
    message = more
    if first.startswith("#"):
        args["incident"] = _incident_id(first)
        message = after
    if not message:
        raise CommandError(gettext_noop("page needs a message saying what is wrong."))
    if len(message) > MESSAGE_MAX:
        raise CommandError(
            gettext_noop("The message is longer than %(limit)s characters."),
            params={"limit": MESSAGE_MAX},
        )
    return "page", {**args, "message": message}


_VERBS = {"declare": _declare, "status": _status, "note": _note, "page": _page}


def command_parse(text: str) -> tuple[str, dict[str, Any]]:
    """`/incident`'s text → (action, arguments); CommandError naming what is wrong."""
    verb, rest = _split(text or "")
    if not verb or verb.lower() in ("help", "?", "-h", "--help"):
        return "help", {}
    parse = _VERBS.get(verb.lower())
    if parse is None:
        raise CommandError(
            gettext_noop("Unknown command %(verb)s."), params={"verb": repr(verb[:20])}
        )
    return parse(rest)
