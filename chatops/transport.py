"""What a surface does for the console, and the registry that picks it per installation.
chatops/slack/client.py and chatops/mattermost/client.py implement it with their kept
clients (slack_sdk, mattermostautodriver), picked per installation by
chatops/surfaces.py `transport_for(workspace)`; every call runs inside console.outgoing's
guard and an overall deadline (CHAT_TIMEOUT_SECONDS), never inside a transaction."""

from __future__ import annotations

from typing import Protocol

from chatops.messages import Dialog, Message, Profile


class TransportError(Exception):
    """A call the chat refused or did not answer. `retry`: trying later may help (a
    timeout, 5xx, 429); `retry_after`: seconds the chat asked for (429), else None."""

    def __init__(self, message: str, *, retry: bool = False, retry_after: float | None = None):
        super().__init__(message, retry, retry_after)
        self.message, self.retry, self.retry_after = message, retry, retry_after

    def __str__(self) -> str:
        return self.message


class Transport(Protocol):
    def post(self, *, channel: str, thread: str, message: Message) -> str:
        """Post to a channel ("" thread) or a thread; returns the message's id."""

    def edit(self, *, channel: str, message_id: str, message: Message) -> None: ...

    def ephemeral(self, *, channel: str, user: str, thread: str, message: Message) -> None:
        """Only `user` sees it."""

    def respond(self, *, reply_url: str, message: Message) -> None:
        """Answer through the request's reply address (Slack's response_url)."""

    def create_channel(self, *, name: str, members: list[str]) -> str:
        """A public channel for one incident; returns its id (a name already taken gets a
        short random suffix, once)."""

    def open_dialog(self, *, trigger: str, dialog: Dialog, user: str) -> str:
        """Returns the dialog's id ("" when the surface cannot update dialogs)."""

    def update_dialog(self, *, dialog_id: str, dialog: Dialog) -> None: ...

    def profile(self, *, user: str) -> Profile: ...

    def permalink(self, *, channel: str, message_id: str) -> str: ...
