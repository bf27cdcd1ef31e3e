"""The Mattermost transport: chatops.transport.Transport through the kept client,
mattermostautodriver (httpx). Each call builds a driver from the workspace (the server's
address, the bot's token, CHAT_TIMEOUT_SECONDS, the driver's own retries off: the
console's post queue retries), runs inside console.outgoing's guard and an overall
deadline, and closes it again: a connection never outlives its deadline.

Errors become TransportError: 429 → retry (after what the server asked), 5xx, timeouts and
unreachable servers → retry; 400/401/403/404 → no retry, with what to fix.

Two Mattermost differences (see docs/chat.md):
- `respond(reply_url)` is not used: Mattermost's slash command response URL is not kept
  (ChatRequest.reply_url is ""), the core answers through `ephemeral`; it raises.
- Dialogs cannot be updated once open: `open_dialog` returns "" and the core opens them
  only when complete; `update_dialog` raises.
`permalink` uses Mattermost's team-less form /_redirect/pl/{post} (Mattermost 5.16+): the
workspace knows the team's id, and permalinks want its name.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from mattermostautodriver import TypedDriver
from mattermostautodriver.client import Client
from mattermostautodriver.exceptions import (
    InvalidMattermostError,
    InvalidOrMissingParameters,
    MattermostError,
    TooManyRequests,
)

from chatops.mattermost.render import dialog_body, dialogs_url, post_body
from chatops.messages import Dialog, Message, Profile
from chatops.models import Workspace
from chatops.transport import TransportError
from console.outgoing import DeadlineExceeded, OutgoingRefused, deadline, guarded

log = logging.getLogger(__name__)
T = TypeVar("T")
CHANNEL_EXISTS = "store.sql_channel.save_channel.exists.app_error"
# Mattermost's identity providers whose auth_data is the user's subject there.
SSO_SERVICES = frozenset({"openid", "gitlab", "saml", "office365", "google"})
CHANNEL_NAME_MAX = 64


class _Client(Client):
    """The driver's client with the server's path kept (a Mattermost served under
    /chat): the driver builds its base URL from scheme, host and port only."""

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self._url: str = f"{self.url}{options['path_prefix']}"


def _status_error(status: int, what: str, detail: str) -> TransportError:
    detail = detail[:300]
    if status == 401:
        return TransportError(
            f"Mattermost refused the bot token (401) to {what}: make a new access token for "
            f"the bot account and save it in the workspace. {detail}"
        )
    if status == 403:
        return TransportError(
            f"the bot account may not {what} (403): add it to the team and the channel, or "
            f"give it the permission. {detail}"
        )
    if status == 404:
        return TransportError(
            f"Mattermost found nothing to {what} (404): check the channel, post or user id. "
            f"{detail}"
        )
    if status == 400:
        return TransportError(f"Mattermost refused the request to {what} (400): {detail}")
    if status >= 500 and status != 501:
        return TransportError(f"Mattermost failed to {what} ({status}): {detail}", retry=True)
    return TransportError(f"Mattermost refused to {what} ({status}): {detail}")


def _json(answer: Any) -> dict[str, Any]:
    """The driver returns its raw response for a GET whose Content-Type is not exactly
    application/json (a proxy adding a charset): read it as JSON all the same."""
    data = answer.json() if isinstance(answer, httpx.Response) else answer
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def channel_name(name: str) -> str:
    """A valid Mattermost channel name: lower case letters, digits, '-' and '_'."""
    cleaned = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-_")[:CHANNEL_NAME_MAX]
    return cleaned if len(cleaned) >= 2 else f"incident-{cleaned}".strip("-")


class MattermostTransport:
    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    # --- the driver and one guarded call -----------------------------------------------

    def _driver(self) -> TypedDriver:
        parts = urlsplit(self.workspace.api_url)
        scheme = parts.scheme or "https"
        host = parts.hostname or ""
        timeout = settings.CHAT_TIMEOUT_SECONDS
        options = {
            "scheme": scheme,
            "url": f"[{host}]" if ":" in host else host,
            "port": parts.port or (443 if scheme == "https" else 80),
            "path_prefix": parts.path.rstrip("/"),
            "token": self.workspace.bot_token,
            "timeout": timeout,
            "request_timeout": timeout,
            "max_retries": 0,
            # An explicit transport: no environment proxies (the guard would check the
            # proxy, not Mattermost) and no hidden connect retries.
            "transport": httpx.HTTPTransport(retries=0),
        }
        driver = TypedDriver(options, client_cls=_Client)
        # The token as a bearer header, without login()'s extra call to /users/me.
        driver.client.token = self.workspace.bot_token
        return driver

    def _call(self, what: str, call: Callable[[TypedDriver], T]) -> T:
        seconds = settings.CHAT_TIMEOUT_SECONDS
        block = None
        try:
            with deadline(seconds) as block, guarded():
                driver = self._driver()
                try:
                    return call(driver)
                finally:
                    driver.close()
        except TooManyRequests as exc:
            raise TransportError(
                f"Mattermost is rate limiting the bot ({what}): try again later",
                retry=True,
                retry_after=exc.retry_after,
            ) from exc
        except MattermostError as exc:
            raise _status_error(exc.status_code, what, str(exc)) from exc
        except InvalidMattermostError as exc:
            raise _status_error(exc.status_code, what, str(exc)) from exc
        except OutgoingRefused as exc:
            raise TransportError(
                f"the console's outgoing guard refused Mattermost's address ({exc}): admit "
                "it with OUTGOING_URL_ALLOWLIST"
            ) from exc
        except (httpx.HTTPError, OSError, DeadlineExceeded) as exc:
            # The deadline cuts the socket: httpx then sees a disconnect, not a timeout.
            if isinstance(exc, httpx.TimeoutException | DeadlineExceeded) or (
                block is not None and block.fired
            ):
                raise TransportError(
                    f"Mattermost did not answer within {seconds:g} s ({what})", retry=True
                ) from exc
            raise TransportError(
                f"could not reach Mattermost to {what}: {type(exc).__name__} {exc}", retry=True
            ) from exc
        except ValueError as exc:  # an answer that is not JSON (a proxy's error page)
            raise TransportError(f"Mattermost's answer to {what} is not JSON", retry=True) from exc

    # --- Transport ---------------------------------------------------------------------

    def whoami(self) -> dict[str, Any]:
        """The bot account (checks the address and the token)."""
        return self._call("read the bot account", lambda d: _json(d.users.get_user("me")))

    def post(self, *, channel: str, thread: str, message: Message) -> str:
        body = post_body(self.workspace, message)
        answer = self._call(
            "post a message",
            lambda d: d.posts.create_post(
                channel_id=channel, message=body["message"], root_id=thread or None,
                props=body["props"] or None,
            ),
        )  # fmt: skip
        return str(answer["id"])

    def edit(self, *, channel: str, message_id: str, message: Message) -> None:
        body = post_body(self.workspace, message)
        # A patch with props: Mattermost replaces the post's props with these.
        self._call(
            "edit a message",
            lambda d: d.posts.patch_post(message_id, message=body["message"], props=body["props"]),
        )

    def ephemeral(self, *, channel: str, user: str, thread: str, message: Message) -> None:
        body = post_body(self.workspace, message)
        post = {"channel_id": channel, "message": body["message"], "props": body["props"]}
        if thread:
            post["root_id"] = thread
        self._call(
            "send a message only one person sees",
            lambda d: d.posts.create_post_ephemeral(user_id=user, post=post),
        )

    def respond(self, *, reply_url: str, message: Message) -> None:
        raise TransportError(
            "Mattermost has no reply address here: answers go as ephemeral posts", retry=False
        )

    def create_channel(self, *, name: str, members: list[str]) -> str:
        team, handle = self.workspace.external_team, channel_name(name)

        def make(d: TypedDriver) -> tuple[str, bool]:
            try:
                made = d.channels.create_channel(
                    team_id=team, name=handle, display_name=name[:CHANNEL_NAME_MAX], type="O"
                )
                return str(made["id"]), True
            except InvalidOrMissingParameters as exc:
                if exc.error_id != CHANNEL_EXISTS:
                    raise
            found = d.channels.get_channel_by_name(team, handle)
            return str(found["id"]), False

        channel, created = self._call("create a channel", make)
        wanted = list(dict.fromkeys(members))
        if not created:  # the bot joins a channel made before (by us, or by hand)
            wanted.insert(0, str(self.whoami()["id"]))
        for user in wanted:
            self._member_add(channel, user)
        return channel

    def _member_add(self, channel: str, user: str) -> None:
        try:
            self._call(
                "add a member to a channel",
                lambda d: d.channels.add_channel_member(channel, user_id=user),
            )
        except TransportError as exc:
            if exc.retry:
                raise
            # One member who cannot join (deactivated, not in the team) does not stop the
            # channel; the others are still added.
            log.warning("mattermost: %s not added to %s: %s", user, channel, exc)

    def open_dialog(self, *, trigger: str, dialog: Dialog, user: str) -> str:
        url, body = dialogs_url(self.workspace), dialog_body(self.workspace, dialog)
        self._call(
            "open a dialog",
            lambda d: d.integration_actions.open_interactive_dialog(
                trigger_id=trigger, url=url, dialog=body
            ),
        )
        return ""

    def update_dialog(self, *, dialog_id: str, dialog: Dialog) -> None:
        raise TransportError(
            "Mattermost cannot update an open dialog: open it only when complete", retry=False
        )

    def profile(self, *, user: str) -> Profile:
        data = self._call("read a user's profile", lambda d: _json(d.users.get_user(user)))
        verified = bool(data.get("email_verified"))
        service = str(data.get("auth_service") or "")
        full = f"{data.get('first_name') or ''} {data.get('last_name') or ''}".strip()
        return Profile(
            user=str(data.get("id") or user),
            name=full or str(data.get("nickname") or "") or str(data.get("username") or ""),
            email=str(data.get("email") or "") if verified else "",
            email_verified=verified,
            sso_subject=str(data.get("auth_data") or "") if service in SSO_SERVICES else "",
        )

    def permalink(self, *, channel: str, message_id: str) -> str:
        return f"{self.workspace.api_url.rstrip('/')}/_redirect/pl/{message_id}"
