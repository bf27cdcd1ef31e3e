"""Message and Dialog (chatops/messages.py) -> Slack Block Kit. Pure: no call, no query.

A message: a header (its title), sections of mrkdwn fields, context lines, an actions
block of buttons and a "View in console" link button; `text` always set (the fallback
notifications and screen readers use). A button's action_id is "<action>:<n>" (unique in
the message) and its value the JSON of Button.value, which parse.py decodes back.

A dialog: a modal (callback_id "chatops") whose private_metadata carries the action and
its value as JSON, with a plain-text input per Input (block_id and action_id are the
input's name); a dialog without `submit` (one still loading) shows no inputs, since
Slack refuses inputs in a modal that cannot be submitted.

User text in mrkdwn is escaped as Slack asks: &, < and > only."""

from __future__ import annotations

import json
from typing import Any

from django.utils.translation import gettext

from chatops.messages import Button, Dialog, Message

CALLBACK_ID = "chatops"
LINK_ACTION = "open_link"
METADATA_ACTION, METADATA_VALUE = "action", "value"
STYLES = ("primary", "danger")
# Slack's limits (Block Kit reference).
TITLE_MAX, HEADER_MAX, SECTION_MAX, FIELD_MAX = 24, 150, 3000, 2000
BUTTON_TEXT_MAX, BUTTON_VALUE_MAX, METADATA_MAX = 75, 2000, 3000
FIELDS_PER_SECTION, ELEMENTS_PER_CONTEXT, BUTTONS_MAX = 10, 10, 24
TEXT_MAX = 3000


def escape(text: str) -> str:
    """Slack's escaping for text it parses: &, < and > (nothing else)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(text: str, limit: int = HEADER_MAX) -> dict[str, Any]:
    return {"type": "plain_text", "text": _cut(text, limit) or " ", "emoji": True}


def _mrkdwn(text: str, limit: int = SECTION_MAX) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": _cut(escape(text), limit) or " "}


def message_text(message: Message) -> str:
    """The fallback text (escaped: Slack parses it)."""
    return _cut(escape(message.text or message.title), TEXT_MAX) or " "


def _field(label: str, value: str) -> dict[str, Any]:
    body = f"*{_cut(escape(label), 200)}*\n{escape(value)}"
    return {"type": "mrkdwn", "text": _cut(body, FIELD_MAX)}


def button_element(button: Button, index: int) -> dict[str, Any]:
    value = json.dumps(button.value, separators=(",", ":"), sort_keys=True)
    if len(value) > BUTTON_VALUE_MAX:
        raise ValueError(f"button {button.action!r}: its value is over {BUTTON_VALUE_MAX} chars")
    element: dict[str, Any] = {
        "type": "button",
        "action_id": f"{button.action}:{index}",
        "text": _plain(button.label, BUTTON_TEXT_MAX),
        "value": value,
    }
    if button.style in STYLES:
        element["style"] = button.style
    if button.confirm:
        element["confirm"] = {
            "title": _plain(button.label, 100),
            "text": _mrkdwn(button.confirm, 300),
            "confirm": _plain(button.label, 30),
            "deny": _plain(gettext("Cancel"), 30),
        }
        if button.style == "danger":
            element["confirm"]["style"] = "danger"
    return element


def message_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.title:
        blocks.append({"type": "header", "text": _plain(message.title, HEADER_MAX)})
    if not message.title and not message.fields and not message.lines:
        blocks.append({"type": "section", "text": _mrkdwn(message.text)})
    for start in range(0, len(message.fields), FIELDS_PER_SECTION):
        chunk = message.fields[start : start + FIELDS_PER_SECTION]
        blocks.append({"type": "section", "fields": [_field(a, b) for a, b in chunk]})
    for start in range(0, len(message.lines), ELEMENTS_PER_CONTEXT):
        lines = message.lines[start : start + ELEMENTS_PER_CONTEXT]
        blocks.append({"type": "context", "elements": [_mrkdwn(line, FIELD_MAX) for line in lines]})
    elements = [button_element(b, n) for n, b in enumerate(message.buttons[:BUTTONS_MAX])]
    if message.link:
        elements.append(
            {
                "type": "button",
                "action_id": LINK_ACTION,
                "text": _plain(gettext("View in console"), BUTTON_TEXT_MAX),
                "url": message.link,
            }
        )
    if elements:
        blocks.append({"type": "actions", "block_id": "actions", "elements": elements})
    return blocks


def dialog_metadata(dialog: Dialog) -> str:
    metadata = json.dumps(
        {METADATA_ACTION: dialog.action, METADATA_VALUE: dialog.value}, separators=(",", ":")
    )
    if len(metadata) > METADATA_MAX:
        raise ValueError(f"dialog {dialog.action!r}: its value is over {METADATA_MAX} chars")
    return metadata


def dialog_view(dialog: Dialog) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if dialog.lines:
        blocks.append({"type": "section", "text": _mrkdwn("\n".join(dialog.lines))})
    for start in range(0, len(dialog.fields), FIELDS_PER_SECTION):
        chunk = dialog.fields[start : start + FIELDS_PER_SECTION]
        blocks.append({"type": "section", "fields": [_field(a, b) for a, b in chunk]})
    if dialog.submit:
        for field in dialog.inputs:
            element: dict[str, Any] = {
                "type": "plain_text_input",
                "action_id": field.name,
                "multiline": field.multiline,
            }
            if field.initial:
                element["initial_value"] = field.initial
            blocks.append(
                {
                    "type": "input",
                    "block_id": field.name,
                    "label": _plain(field.label, FIELD_MAX),
                    "optional": field.optional,
                    "element": element,
                }
            )
    if not blocks:
        blocks.append({"type": "section", "text": _mrkdwn("…")})
    view: dict[str, Any] = {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "title": _plain(dialog.title, TITLE_MAX),
        "close": _plain(gettext("Close"), TITLE_MAX),
        "private_metadata": dialog_metadata(dialog),
        "blocks": blocks,
    }
    if dialog.submit:
        view["submit"] = _plain(dialog.submit, TITLE_MAX)
    return view
