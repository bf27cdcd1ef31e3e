"""A local HTTP server speaking the part of Mattermost's API v4 the console uses, so the
unit tests drive the REAL mattermostautodriver (httpx) against it, and builders for what
Mattermost POSTs to the console (a slash command's form, an integration action, a
dialog submission).

Spoken: GET /api/v4/users/me and /users/{id}; POST /api/v4/posts (root_id threads),
GET/PUT /api/v4/posts/{id} and PUT /posts/{id}/patch; POST /api/v4/posts/ephemeral;
POST /api/v4/channels (a taken name is Mattermost's 400
store.sql_channel.save_channel.exists.app_error), GET /teams/{id}/channels/name/{name},
POST /channels/{id}/members; POST /api/v4/actions/dialogs/open. Every call needs the bot's
bearer token (401 otherwise) and is recorded; posts are kept per channel. `fail()` scripts
the next answers (a status with headers, or a hang).

Tests declare `pytest_plugins = ["tests.chat_mattermost_server"]` and take the
`mattermost_server` fixture.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

BOT_TOKEN = "mm-bot-token-for-tests"
COMMAND_TOKEN = "mm-command-token-0123456789"
TEAM = "teamid0000000000000000000a"
BOT_ID = "botid00000000000000000000a"
ERROR_CHANNEL_EXISTS = "store.sql_channel.save_channel.exists.app_error"

_ids = itertools.count(1)


def new_id(prefix: str = "id") -> str:
    """26 characters, like Mattermost's ids."""
    return f"{prefix}{next(_ids):0>{26 - len(prefix)}}"


@dataclass
class Call:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the JSON sent, or None


@dataclass
class Failure:
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None  # None: Mattermost's JSON error shape
    hang: float = 0.0  # seconds to wait before answering (0: answer now)
    path: str = ""  # only calls whose path starts with this ("" any)


class MattermostServer:
    def __init__(self, *, token: str = BOT_TOKEN, team: str = TEAM) -> None:
        self.token = token
        self.team = team
        self.calls: list[Call] = []
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self.members: dict[str, set[str]] = {}
        self.posts: dict[str, dict[str, Any]] = {}
        self.by_channel: dict[str, list[dict[str, Any]]] = {}
        self.ephemerals: list[dict[str, Any]] = []
        self.dialogs: list[dict[str, Any]] = []
        self.script: list[Failure] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.bot = self.user_add(
            id=BOT_ID, username="incident-bot", email="bot@example.com", is_bot=True
        )
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.server.block_on_close = False  # a hanging answer must not hold close()
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    # --- set-up and inspection -------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def user_add(self, **fields: Any) -> dict[str, Any]:
        user = {
            "id": new_id("u"),
            "username": "someone",
            "email": "",
            "email_verified": False,
            "auth_service": "",
            "auth_data": "",
            "first_name": "",
            "last_name": "",
            "nickname": "",
            "locale": "en",
            "is_bot": False,
            **fields,
        }
        self.users[user["id"]] = user
        return user

    def channel_add(self, name: str, *, team: str = "") -> dict[str, Any]:
        channel = {
            "id": new_id("c"),
            "team_id": team or self.team,
            "name": name,
            "display_name": name,
            "type": "O",
        }
        self.channels[channel["id"]] = channel
        self.members[channel["id"]] = set()
        return channel

    def fail(
        self,
        status: int = 500,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
        hang: float = 0.0,
        path: str = "",
    ) -> None:
        """The next `times` matching calls answer `status` (after `hang` seconds)."""
        with self._lock:
            for _ in range(times):
                self.script.append(Failure(status, dict(headers or {}), body, hang, path))

    def calls_to(self, method: str, path: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and c.path.startswith(path)]

    def close(self) -> None:
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()

    # --- the API ---------------------------------------------------------------------

    def _failure(self, path: str) -> Failure | None:
        with self._lock:
            for index, failure in enumerate(self.script):
                if path.startswith(failure.path):
                    return self.script.pop(index)
        return None

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        path = path.split("?", 1)[0]
        for pattern, route_method, name in _ROUTES:
            match = re.fullmatch(pattern, path)
            if match and route_method == method:
                with self._lock:
                    return getattr(self, name)(body or {}, *match.groups())
        return 404, _error(404, "api.context.404.app_error", f"no route {method} {path}")

    def _me(self, body: Any) -> tuple[int, Any]:
        return 200, self.bot

    def _user(self, body: Any, user_id: str) -> tuple[int, Any]:
        user = self.users.get(user_id)
        if user is None:
            return 404, _error(404, "app.user.missing_account.const", "Unable to find the user.")
        return 200, user

    def _post_create(self, body: dict[str, Any]) -> tuple[int, Any]:
        channel = str(body.get("channel_id") or "")
        if channel not in self.channels:
            return 403, _error(
                403, "api.context.permissions.app_error", "You do not have the permission."
            )
        root = str(body.get("root_id") or "")
        if root and root not in self.posts:
            return 400, _error(400, "api.post.create_post.root_id.app_error", "Invalid RootId.")
        now = int(time.time() * 1000)
        post = {
            "id": new_id("p"),
            "create_at": now,
            "update_at": now,
            "edit_at": 0,
            "user_id": self.bot["id"],
            "channel_id": channel,
            "root_id": root,
            "message": str(body.get("message") or ""),
            "props": body.get("props") or {},
            "type": "",
        }
        self.posts[post["id"]] = post
        self.by_channel.setdefault(channel, []).append(post)
        return 201, post

    def _post_get(self, body: Any, post_id: str) -> tuple[int, Any]:
        post = self.posts.get(post_id)
        if post is None:
            return 404, _error(404, "app.post.get.app_error", "Unable to get the post.")
        return 200, post

    def _post_update(self, body: dict[str, Any], post_id: str) -> tuple[int, Any]:
        post = self.posts.get(post_id)
        if post is None:
            return 404, _error(404, "app.post.get.app_error", "Unable to get the post.")
        if body.get("id", post_id) != post_id:
            return 400, _error(400, "api.context.invalid_body_param.app_error", "Invalid id.")
        # PUT replaces message and props; a patch changes only what it sends.
        for key in ("message", "props"):
            if key in body:
                post[key] = body[key]
        post["edit_at"] = post["update_at"] = int(time.time() * 1000)
        return 200, post

    def _post_patch(self, body: dict[str, Any], post_id: str) -> tuple[int, Any]:
        return self._post_update(body, post_id)

    def _ephemeral(self, body: dict[str, Any]) -> tuple[int, Any]:
        post = body.get("post") or {}
        if not body.get("user_id") or not post.get("channel_id"):
            return 400, _error(
                400, "api.context.invalid_body_param.app_error", "Invalid user_id or post."
            )
        sent = {"id": new_id("e"), "user_id": self.bot["id"], **post}
        self.ephemerals.append({"user_id": body["user_id"], "post": sent})
        return 201, sent

    def _channel_create(self, body: dict[str, Any]) -> tuple[int, Any]:
        team, name = str(body.get("team_id") or ""), str(body.get("name") or "")
        if team != self.team:
            return 403, _error(403, "api.context.permissions.app_error", "Not in that team.")
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{1,63}", name):
            return 400, _error(400, "model.channel.is_valid.name.app_error", "Invalid name.")
        if any(c["team_id"] == team and c["name"] == name for c in self.channels.values()):
            return 400, _error(
                400, ERROR_CHANNEL_EXISTS, "A channel with that name already exists."
            )
        channel = self.channel_add(name, team=team)
        channel["display_name"] = str(body.get("display_name") or name)
        channel["type"] = str(body.get("type") or "O")
        self.members[channel["id"]].add(self.bot["id"])  # the creator joins
        return 201, channel

    def _channel_by_name(self, body: Any, team: str, name: str) -> tuple[int, Any]:
        for channel in self.channels.values():
            if channel["team_id"] == team and channel["name"] == name:
                return 200, channel
        return 404, _error(404, "app.channel.get_by_name.missing.app_error", "Channel not found.")

    def _member_add(self, body: dict[str, Any], channel_id: str) -> tuple[int, Any]:
        if channel_id not in self.channels:
            return 404, _error(404, "app.channel.get.existing.app_error", "Channel not found.")
        wanted = list(body.get("user_ids") or []) + (
            [body["user_id"]] if body.get("user_id") else []
        )
        if not wanted:
            return 400, _error(400, "api.context.invalid_body_param.app_error", "No user_id.")
        unknown = [u for u in wanted if u not in self.users]
        if unknown:
            return 404, _error(404, "app.user.missing_account.const", "Unable to find the user.")
        self.members[channel_id].update(wanted)
        answer = [{"channel_id": channel_id, "user_id": u} for u in wanted]
        return 201, answer if body.get("user_ids") else answer[0]

    def _dialog_open(self, body: dict[str, Any]) -> tuple[int, Any]:
        dialog = body.get("dialog") or {}
        if not body.get("trigger_id") or not body.get("url") or not dialog.get("title"):
            return 400, _error(
                400, "interactive_message.decode_trigger_id.missing_data", "Invalid trigger."
            )
        self.dialogs.append(body)
        return 200, {"status": "OK"}


_ROUTES: list[tuple[str, str, str]] = [
    (r"/api/v4/users/me", "GET", "_me"),
    (r"/api/v4/users/([a-z0-9]+)", "GET", "_user"),
    (r"/api/v4/posts", "POST", "_post_create"),
    (r"/api/v4/posts/ephemeral", "POST", "_ephemeral"),
    (r"/api/v4/posts/([a-z0-9]+)", "GET", "_post_get"),
    (r"/api/v4/posts/([a-z0-9]+)", "PUT", "_post_update"),
    (r"/api/v4/posts/([a-z0-9]+)/patch", "PUT", "_post_patch"),
    (r"/api/v4/channels", "POST", "_channel_create"),
    (r"/api/v4/teams/([a-z0-9]+)/channels/name/([a-z0-9_-]+)", "GET", "_channel_by_name"),
    (r"/api/v4/channels/([a-z0-9]+)/members", "POST", "_member_add"),
    (r"/api/v4/actions/dialogs/open", "POST", "_dialog_open"),
]


def _error(status: int, error_id: str, message: str) -> dict[str, Any]:
    return {"id": error_id, "message": message, "request_id": new_id("r"), "status_code": status}


def _handler(mm: MattermostServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            # Exactly this: the driver reads JSON only when the type is exactly this.
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            with mm._lock:
                mm.calls.append(Call(method, self.path, dict(self.headers), body))
            if self.headers.get("Authorization", "") != f"Bearer {mm.token}":
                return self._answer(
                    401,
                    _error(
                        401,
                        "api.context.session_expired.app_error",
                        "Invalid or expired session, please login again.",
                    ),
                )
            failure = mm._failure(self.path)
            if failure is not None:
                if failure.hang and mm._closing.wait(failure.hang):
                    return
                if failure.status == 429 and failure.body is None:
                    # Mattermost's rate limiter answers in plain text.
                    return self._answer(429, b"limit exceeded\n", failure.headers)
                body_out = failure.body or _error(
                    failure.status, "app.test.scripted_failure", "scripted failure"
                )
                return self._answer(failure.status, body_out, failure.headers)
            status, answer = mm.handle(method, self.path, body)
            self._answer(status, answer)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PUT(self) -> None:
            self._serve("PUT")

        def log_message(self, *args: object) -> None:
            pass

    return Handler


# --- what Mattermost POSTs to the console ----------------------------------------------


def slash_command_form(text: str = "", **fields: str) -> dict[str, str]:
    """A slash command's form, as Mattermost sends it (application/x-www-form-urlencoded)."""
    return {
        "token": COMMAND_TOKEN,
        "team_id": TEAM,
        "team_domain": "ops",
        "channel_id": "cincidents00000000000000001",
        "channel_name": "incidents",
        "user_id": "uresponder0000000000000001",
        "user_name": "alice",
        "command": "/incident",
        "text": text,
        "trigger_id": new_id("trig"),
        "response_url": "https://chat.example.com/hooks/commands/abc",
        **fields,
    }


def action_payload(context: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """An integration action (a button press): the button's context as it was posted."""
    return {
        "user_id": "uresponder0000000000000001",
        "user_name": "alice",
        "channel_id": "cincidents00000000000000001",
        "channel_name": "incidents",
        "team_id": TEAM,
        "team_domain": "ops",
        "post_id": "ppost000000000000000000001",
        "trigger_id": new_id("trig"),
        "type": "",
        "data_source": "",
        "context": context,
        **fields,
    }


def dialog_submission(
    state: str, submission: dict[str, Any] | None = None, **fields: Any
) -> dict[str, Any]:
    """An interactive dialog submitted (or cancelled): the dialog's state as it was opened."""
    return {
        "type": "dialog_submission",
        "callback_id": "",
        "state": state,
        "user_id": "uresponder0000000000000001",
        "channel_id": "cincidents00000000000000001",
        "team_id": TEAM,
        "submission": submission or {},
        "cancelled": False,
        **fields,
    }


@pytest.fixture
def mattermost_server() -> Iterator[MattermostServer]:
    server = MattermostServer()
    try:
        yield server
    finally:
        server.close()
