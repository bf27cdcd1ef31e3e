"""Message and Dialog (chatops/messages.py) as Mattermost wants them: a post with one
message attachment whose buttons are integration actions (they POST to the console's
actions endpoint with a signed context), and an interactive dialog whose state is signed.

Limits Mattermost enforces are applied here (a dialog title of 24 characters, element
labels of 24, alphanumeric action ids). A Button's `confirm` question has no Mattermost
equivalent (message buttons cannot ask first): the core asks through a dialog where a
confirmation matters (a reason to resolve while alerts fire).
"""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse

from chatops.mattermost.verify import action_context_sign, dialog_state_sign
from chatops.messages import Dialog, Message
from chatops.models import Workspace
from chatops.transport import TransportError
from notifications.links import console_url

MESSAGE_MAX_CHARS = 16000  # Mattermost's post limit is 16383 runes
DIALOG_TITLE_MAX = 24
ELEMENT_LABEL_MAX = 24
TEXT_MAX = 150
TEXTAREA_MAX = 3000
SHORT_FIELD_MAX = 40
STYLES = {"primary": "primary", "danger": "danger"}


def _absolute(name: str, workspace: Workspace) -> str:
    base = console_url()
    if not base:
        # A relative URL would be refused by Mattermost, and the buttons would be dead. The
        # address may become known (the first signed-in request), so the post is retried.
        raise TransportError(
            "the console's address is unknown, so Mattermost could not reach its buttons "
            "and dialogs: set NOTIFY_CONSOLE_URL",
            retry=True,
        )
    return base + reverse(name, kwargs={"workspace": workspace.pk})


def actions_url(workspace: Workspace) -> str:
    """Where Mattermost posts a button press: absolute, since Mattermost calls it."""
    return _absolute("chatops:mattermost-actions", workspace)


def dialogs_url(workspace: Workspace) -> str:
    return _absolute("chatops:mattermost-dialogs", workspace)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _action_id(action: str, index: int) -> str:
    # Mattermost puts the id in a URL path and drops anything but letters and digits.
    return (re.sub(r"[^A-Za-z0-9]", "", action)[:20] or "action") + str(index)


def post_body(workspace: Workspace, message: Message) -> dict[str, Any]:
    """{"message": ..., "props": ...} for create_post / patch_post. A plain message (text
    only) is a plain post; anything more is one attachment, with the text as its
    fallback (notifications and clients that show no attachments)."""
    if not (message.title or message.fields or message.lines or message.buttons or message.color):
        return {"message": _clip(message.text, MESSAGE_MAX_CHARS), "props": {}}
    url = actions_url(workspace) if message.buttons else ""
    attachment: dict[str, Any] = {
        "fallback": _clip(message.text, MESSAGE_MAX_CHARS),
        "color": message.color or "#8a8a8a",
        "title": message.title,
        "title_link": message.link,
        "text": _clip("\n".join(message.lines), MESSAGE_MAX_CHARS),
        "fields": [
            {
                "title": label,
                "value": value,
                "short": len(value) <= SHORT_FIELD_MAX and "\n" not in value,
            }
            for label, value in message.fields
        ],
        "actions": [
            {
                "id": _action_id(button.action, index),
                "type": "button",
                "name": button.label,
                "style": STYLES.get(button.style, "default"),
                "integration": {
                    "url": url,
                    "context": action_context_sign(workspace, button.action, button.value),
                },
            }
            for index, button in enumerate(message.buttons)
        ],
    }
    return {"message": "", "props": {"attachments": [attachment]}}


def dialog_body(workspace: Workspace, dialog: Dialog) -> dict[str, Any]:
    """An interactive dialog (the `dialog` of /actions/dialogs/open): its inputs as text
    or textarea elements, its lines and fields as the introduction."""
    intro = list(dialog.lines) + [f"**{label}**: {value}" for label, value in dialog.fields]
    if len(dialog.title) > DIALOG_TITLE_MAX:  # the whole title, above the clipped one
        intro.insert(0, f"**{dialog.title}**")
    elements = []
    for item in dialog.inputs:
        limit = TEXTAREA_MAX if item.multiline else TEXT_MAX
        elements.append(
            {
                "display_name": _clip(item.label, ELEMENT_LABEL_MAX),
                "name": item.name,
                "type": "textarea" if item.multiline else "text",
                "subtype": "",
                "default": item.initial[:limit],
                "optional": item.optional,
                "max_length": limit,
                # The whole label when it was clipped above.
                "help_text": item.label if len(item.label) > ELEMENT_LABEL_MAX else "",
            }
        )
    body: dict[str, Any] = {
        "callback_id": dialog.action,
        "title": _clip(dialog.title, DIALOG_TITLE_MAX),
        "introduction_text": _clip("\n\n".join(intro), MESSAGE_MAX_CHARS),
        "elements": elements,
        "notify_on_cancel": False,
        "state": dialog_state_sign(workspace, dialog.action, dialog.value),
    }
    if dialog.submit:
        body["submit_label"] = dialog.submit
    return body
