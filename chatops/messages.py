"""What the console says in chat, before a surface renders it: a message (title, fields,
lines, buttons) and a dialog (a Slack modal, a Mattermost interactive dialog). Stored as
dicts in ChatPost.payload, so the console can show a thread as it was sent
(chatops/views.py) and a surface can be swapped without changing what is said."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Button:
    """A press runs `action` (chatops/actions.py) with `value` (incident, run, minutes…)."""

    action: str
    label: str
    value: dict[str, Any] = field(default_factory=dict)
    style: str = ""  # "primary", "danger" or ""
    # A question the chat asks before sending the press ("" asks nothing).
    confirm: str = ""


@dataclass(frozen=True)
class Message:
    text: str  # the whole message as plain text: notifications, fallbacks, search
    title: str = ""
    fields: tuple[tuple[str, str], ...] = ()  # (label, value)
    lines: tuple[str, ...] = ()
    buttons: tuple[Button, ...] = ()
    color: str = ""  # "#rrggbb" by severity, "" for none
    link: str = ""  # the incident's page

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            text=str(data.get("text", "")),
            title=str(data.get("title", "")),
            fields=tuple((str(a), str(b)) for a, b in data.get("fields", ())),
            lines=tuple(str(line) for line in data.get("lines", ())),
            buttons=tuple(Button(**b) for b in data.get("buttons", ())),
            color=str(data.get("color", "")),
            link=str(data.get("link", "")),
        )


@dataclass(frozen=True)
class Input:
    name: str
    label: str
    multiline: bool = False
    optional: bool = False
    initial: str = ""


@dataclass(frozen=True)
class Dialog:
    """Submitting it runs `action` with `value` plus the inputs by name."""

    title: str
    action: str
    value: dict[str, Any] = field(default_factory=dict)
    lines: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()
    inputs: tuple[Input, ...] = ()
    submit: str = ""  # "" shows no submit button (a dialog still loading)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Dialog:
        return cls(
            title=str(data.get("title", "")),
            action=str(data.get("action", "")),
            value=dict(data.get("value", {})),
            lines=tuple(str(line) for line in data.get("lines", ())),
            fields=tuple((str(a), str(b)) for a, b in data.get("fields", ())),
            inputs=tuple(Input(**i) for i in data.get("inputs", ())),
            submit=str(data.get("submit", "")),
        )


@dataclass(frozen=True)
class Profile:
    """What the chat says about a user (chatops/identity.py maps it to a console user)."""

    user: str
    name: str
    email: str = ""
    email_verified: bool = False
    # The identity provider's subject when the chat signs in through the same single
    # sign-on as the console ("" when it does not say).
    sso_subject: str = ""
