"""The Slack transport: slack_sdk's WebClient and WebhookClient, each call inside the
outgoing guard and an overall deadline (CHAT_TIMEOUT_SECONDS). slack_sdk's own retries
are off: a failed post is a ChatPost tried again later by the notifier queue, so a call
here is one attempt, and its failure says whether trying again may help
(TransportError.retry, retry_after for Slack's 429) and what a person should do."""

from __future__ import annotations

import http.client
import logging
import math
import re
import secrets
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.error import URLError

from django.conf import settings
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.webhook import WebhookClient

from chatops.messages import Dialog, Message, Profile
from chatops.models import Workspace
from chatops.slack.parse import reply_url_check
from chatops.slack.render import dialog_view, message_blocks, message_text
from chatops.transport import TransportError
from console.outgoing import DeadlineExceeded, OutgoingRefused, deadline, guarded

logger = logging.getLogger(__name__)
T = TypeVar("T")

# Slack's errors that mean "later may work".
RETRYABLE = {"ratelimited", "internal_error", "fatal_error", "service_unavailable",
             "request_timeout"}  # fmt: skip
TOKEN_ERRORS = {"invalid_auth", "not_authed", "account_inactive", "token_revoked",
                "token_expired", "no_permission", "org_login_required"}  # fmt: skip
_ADVICE = {
    "channel_not_found": "check the channel id in the admin (the workspace's default "
    "channel, the team channels); it is the id (C…), not the name",
    "not_in_channel": "invite the app to the channel (/invite @the-app) or give it the "
    "chat:write.public scope",
    "is_archived": "the channel is archived: unarchive it or pick another in the admin",
    "expired_trigger_id": "Slack lets a dialog open only within 3 s of the press: press the "
    "button again",
    "exchanged_trigger_id": "this press already opened a dialog: press the button again",
    "user_not_found": "the Slack user no longer exists in this workspace",
    "name_taken": "a channel of that name exists already",
    "restricted_action": "a workspace setting forbids the app this (e.g. making channels)",
    "invalid_blocks": "Slack refused the message's layout (a bug: report it)",
    "msg_too_long": "the message is too long for Slack",
}
_CHANNEL_NAME = re.compile(r"[^a-z0-9_-]+")


def _api_error(method: str, exc: SlackApiError) -> TransportError:
    response = exc.response
    status = int(getattr(response, "status_code", 0) or 0)
    data = response.data if isinstance(response.data, dict) else {}
    error = str(data.get("error") or f"HTTP {status}")
    if status == 429 or error == "ratelimited":
        raw = (response.headers or {}).get("Retry-After") or (response.headers or {}).get(
            "retry-after"
        )
        try:
            after = float(raw) if raw is not None else 1.0
        except ValueError:
            after = 1.0
        return TransportError(
            f"Slack is rate limiting {method}: asked to wait {after:g} s",
            retry=True,
            retry_after=after,
        )
    if status >= 500 or error in RETRYABLE:
        return TransportError(
            f"Slack failed {method} ({error}); it will be tried again", retry=True
        )
    if error in TOKEN_ERRORS:
        return TransportError(
            f"Slack refused the bot token ({error}): paste the Bot User OAuth Token again "
            "in the admin (Chat > workspaces)."
        )
    if error == "missing_scope":
        needed = str(data.get("needed") or "?")
        return TransportError(
            f"The Slack app lacks the {needed} scope (missing_scope): add it under OAuth & "
            "Permissions and reinstall the app."
        )
    advice = _ADVICE.get(error, "see Slack's documentation of the method")
    return TransportError(f"Slack refused {method} ({error}): {advice}.")


def _failure(method: str, exc: BaseException) -> TransportError:
    if isinstance(exc, SlackApiError):
        return _api_error(method, exc)
    if isinstance(exc, OutgoingRefused):
        return TransportError(
            f"the console refused to call Slack ({method}): {exc} (OUTGOING_URL_ALLOWLIST "
            "admits an internal address on purpose)"
        )
    if isinstance(exc, DeadlineExceeded | TimeoutError):
        return TransportError(
            f"Slack did not answer {method} within {settings.CHAT_TIMEOUT_SECONDS:g} s", retry=True
        )
    if isinstance(exc, URLError | OSError | http.client.HTTPException):
        reason = getattr(exc, "reason", None) or exc
        return TransportError(f"could not reach Slack for {method}: {reason}", retry=True)
    return TransportError(f"the Slack client failed {method}: {exc}")


def _blocks(message: Message) -> list[dict[str, Any]]:
    try:
        return message_blocks(message)
    except ValueError as exc:  # a button value over Slack's limit: no retry can help
        raise TransportError(f"could not render the message for Slack: {exc}") from exc


def _view(dialog: Dialog) -> dict[str, Any]:
    try:
        return dialog_view(dialog)
    except ValueError as exc:
        raise TransportError(f"could not render the dialog for Slack: {exc}") from exc


class SlackTransport:
    """chatops.transport.Transport for one Slack workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def _client(self) -> WebClient:
        base = self.workspace.api_url
        return WebClient(
            base_url=base if base.endswith("/") else base + "/",
            token=str(self.workspace.bot_token or ""),
            timeout=math.ceil(settings.CHAT_TIMEOUT_SECONDS),
            retry_handlers=[],  # one attempt: ChatPost retries
        )

    def _call(self, method: str, call: Callable[[], T]) -> T:
        try:
            with deadline(settings.CHAT_TIMEOUT_SECONDS), guarded():
                return call()
        except (SlackClientError, OutgoingRefused, OSError, http.client.HTTPException) as exc:
            raise _failure(method, exc) from exc

    def _api(self, method: str, **kwargs: Any) -> dict[str, Any]:
        client = self._client()

        def call() -> dict[str, Any]:
            return dict(client.api_call(method, json=kwargs).data)  # type: ignore[arg-type]

        return self._call(method, call)

    def _form(self, method: str, **params: Any) -> dict[str, Any]:
        """Methods Slack takes only as a form (users.info, conversations.*, permalinks)."""
        client = self._client()

        def call() -> dict[str, Any]:
            return dict(client.api_call(method, params=params).data)  # type: ignore[arg-type]

        return self._call(method, call)

    def post(self, *, channel: str, thread: str, message: Message) -> str:
        body: dict[str, Any] = {
            "channel": channel,
            "text": message_text(message),
            "blocks": _blocks(message),
            "unfurl_links": False,
            "unfurl_media": False,
        }
        if thread:
            body["thread_ts"] = thread
        return str(self._api("chat.postMessage", **body)["ts"])

    def edit(self, *, channel: str, message_id: str, message: Message) -> None:
        self._api(
            "chat.update",
            channel=channel,
            ts=message_id,
            text=message_text(message),
            blocks=_blocks(message),
        )

    def ephemeral(self, *, channel: str, user: str, thread: str, message: Message) -> None:
        body: dict[str, Any] = {
            "channel": channel,
            "user": user,
            "text": message_text(message),
            "blocks": _blocks(message),
        }
        if thread:
            body["thread_ts"] = thread
        self._api("chat.postEphemeral", **body)

    def respond(self, *, reply_url: str, message: Message) -> None:
        if not reply_url_check(self.workspace, reply_url):
            raise TransportError("not a Slack response URL (hooks.slack.com): not called")
        hook = WebhookClient(
            reply_url, timeout=math.ceil(settings.CHAT_TIMEOUT_SECONDS), retry_handlers=[]
        )
        response = self._call(
            "response_url",
            lambda: hook.send(
                text=message_text(message),
                blocks=_blocks(message),
                response_type="ephemeral",
                replace_original=False,
            ),
        )
        status = response.status_code
        if status == 429:
            after = float((response.headers or {}).get("Retry-After") or 1)
            raise TransportError("Slack is rate limiting replies", retry=True, retry_after=after)
        if status >= 500:
            raise TransportError(f"Slack failed the reply (HTTP {status})", retry=True)
        if status != 200:
            # 404/410: the response URL expired (30 minutes) or was used five times.
            raise TransportError(f"Slack refused the reply (HTTP {status}: {response.body[:100]})")

    def create_channel(self, *, name: str, members: list[str]) -> str:
        wanted = _CHANNEL_NAME.sub("-", name.lower()).strip("-")[:80] or "incident"
        try:
            created = self._form("conversations.create", name=wanted, is_private=False)
        except TransportError as exc:
            if "(name_taken)" not in exc.message:
                raise
            # Taken (an older incident's, or someone's): a name of our own, once.
            wanted = f"{wanted[:75]}-{secrets.token_hex(2)}"
            created = self._form("conversations.create", name=wanted, is_private=False)
        channel = str(created["channel"]["id"])
        if members:
            try:
                self._form("conversations.invite", channel=channel, users=",".join(members))
            except TransportError as exc:
                # The channel exists: a member not invited can join it; making it again on
                # a retry would not help.
                logger.warning("slack: inviting to %s failed: %s", channel, exc)
        return channel

    def open_dialog(self, *, trigger: str, dialog: Dialog, user: str) -> str:
        answer = self._api("views.open", trigger_id=trigger, view=_view(dialog))
        return str(answer["view"]["id"])

    def update_dialog(self, *, dialog_id: str, dialog: Dialog) -> None:
        self._api("views.update", view_id=dialog_id, view=_view(dialog))

    def profile(self, *, user: str) -> Profile:
        found = self._form("users.info", user=user)["user"]
        profile = found.get("profile") or {}
        confirmed = bool(found.get("is_email_confirmed"))
        email = str(profile.get("email") or "") if confirmed else ""
        return Profile(
            user=str(found.get("id") or user),
            name=str(profile.get("real_name") or found.get("real_name") or found.get("name") or ""),
            email=email,
            email_verified=bool(email),
        )

    def permalink(self, *, channel: str, message_id: str) -> str:
        return str(
            self._form("chat.getPermalink", channel=channel, message_ts=message_id)["permalink"]
        )
