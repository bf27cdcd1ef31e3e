"""What the console answers a chat user, and sending it at once.

Built in the active language (the worker runs under the reader's language). An answer is
a ChatPost (kind REPLY, or VIEW for a dialog) sent by the worker that ran the request
and, should the chat not answer, retried by chatops/posts like any other post. The reply
goes through the request's reply address when it has one (Slack's response_url), else as
an ephemeral message only that person sees.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from django.utils.translation import gettext, gettext_lazy

from chatops.messages import Button, Dialog, Input, Message
from chatops.models import ChatInteraction, ChatPost, PostKind
from chatops.posts import post_record, post_send
from chatops.transport import TransportError

log = logging.getLogger(__name__)
ADMIN_LINK_PATH = "/admin/chatops/chatidentity/"

GIVE_REASON = gettext_lazy("Give a reason")


def text_message(
    text: str, *, lines: tuple[str, ...] = (), buttons: tuple[Button, ...] = ()
) -> Message:
    """A plain answer: `text`, then `lines`, then buttons (with lines, the text is the
    first line: a surface shows a message's lines, not its fallback text)."""
    if not lines:
        return Message(text=text, buttons=buttons)
    return Message(text="\n".join((text, *lines)), lines=(text, *lines), buttons=buttons)


def refused_message(text: str, *, buttons: tuple[Button, ...] = ()) -> Message:
    return text_message(text, buttons=buttons)


def unmapped_message(*, name: str, email: str, admin_url: str) -> Message:
    """Why a chat user may read but not act, and how to be mapped."""
    text = gettext(
        "%(name)s, you are not linked to a console account, so you can read (status, help) "
        "but not act. To be linked: make the email your chat profile verified the same as "
        "your console account's (%(email)s here), or ask a console admin to link you at "
        "%(url)s."
    ) % {
        "name": name,
        "email": email or gettext("none verified"),
        "url": admin_url,
    }
    return text_message(text)


def slow_down_message(*, limit: int, seconds: int) -> Message:
    text = gettext(
        "Slow down: more than %(limit)s actions in a minute. Try again in %(seconds)s s."
    ) % {"limit": limit, "seconds": seconds}
    return text_message(text)


def failed_message() -> Message:
    return text_message(gettext("Something went wrong; it is logged."))


def reason_dialog(*, title: str, action: str, value: dict[str, object], why: str) -> Dialog:
    """Asks for the reason a move made while alerts still fire needs."""
    return Dialog(
        title=title,  # each surface fits it to its limit
        action=action,
        value=value,
        lines=(why,),
        inputs=(Input("reason", gettext("Reason (it goes on the timeline)"), multiline=True),),
        submit=gettext("Confirm"),
    )


def _send(post: ChatPost | None) -> ChatPost | None:
    """Send now; a chat that does not answer leaves the post to the retries."""
    if post is None:
        return None
    try:
        post_send(post_id=post.pk)
    except TransportError as exc:  # post_send records its own failures; belt and braces
        log.warning("chatops: reply %s not sent now (%s); it is retried", post.key, exc)
    return ChatPost.objects.filter(pk=post.pk).first()


def reply_send(*, interaction: ChatInteraction, message: Message, n: int) -> ChatPost | None:
    """Answer the person who made `interaction` (the n-th answer to it)."""
    request = interaction.request or {}
    post = post_record(
        workspace_id=interaction.workspace_id,
        kind=PostKind.REPLY,
        key=f"reply:{interaction.pk}:{n}",
        payload={
            "message": message.as_dict(),
            "channel": str(request.get("channel", "")),
            "user": interaction.external_user,
            "thread": str(request.get("thread", "")),
        },
        reply_url=interaction.reply_url,
    )
    return _send(post)


def dialog_send(
    *, interaction: ChatInteraction, dialog: Dialog, n: int, dialog_id: str = ""
) -> ChatPost | None:
    """Open a dialog with the request's trigger (or update the open one, `dialog_id`).
    The post comes back as sent: its external_id is the dialog's id ("" when the chat
    cannot update dialogs), or not: the trigger had expired or the chat did not answer."""
    request = interaction.request or {}
    # A submitted dialog comes back with no channel and no response URL (Slack's
    # view_submission): its value carries where the answer goes.
    where = {k: str(request[k]) for k in ("channel", "thread") if request.get(k)}
    dialog = replace(dialog, value={**where, **dialog.value})
    post = post_record(
        workspace_id=interaction.workspace_id,
        kind=PostKind.VIEW,
        key=f"view:{interaction.pk}:{n}",
        payload={
            "dialog": dialog.as_dict(),
            "trigger": "" if dialog_id else str(request.get("trigger", "")),
            "user": interaction.external_user,
            "dialog_id": dialog_id,
        },
    )
    return _send(post)
