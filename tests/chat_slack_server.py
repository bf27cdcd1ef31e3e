"""A local stand-in for Slack, for tests of the Slack surface: a real HTTP server on
127.0.0.1 and a free port that speaks the part of Slack's Web API the console uses, so
the real slack_sdk WebClient (base_url=server.api_url) and WebhookClient talk to it
through the outgoing guard, and the payload builders and signer that post to the console
exactly as Slack does.

Web API (POST /api/<method>, form or JSON body, `Authorization: Bearer <token>`; answers
{"ok": true, ...} or {"ok": false, "error": "..."} with HTTP 200 like Slack): auth.test,
chat.postMessage (thread_ts), chat.update, chat.postEphemeral, chat.getPermalink,
conversations.create (name_taken), conversations.invite, views.open (trigger ids from
`new_trigger()`, fresh for `trigger_ttl` s and used once, else expired_trigger_id /
exchanged_trigger_id), views.update, users.info (users from `add_user`). Response URLs:
POST /respond/<id> (`response_url()` makes one), recorded in `responses`.

Every call is recorded in `calls` (method, body, thread_ts, status). Messages are kept
per channel in `messages` (chat.update edits them in place), so a test finds the state
message and its buttons (`buttons()`), and presses one (`press()`) or submits an
open modal (`submit()`) as Slack would. Failures: `fail(500)`, `fail(429, retry_after=7)`,
`fail(hang=5.0)` (holds the request unanswered: the caller's deadline must end the
wait), `refuse("channel_not_found")` (Slack's ok=false answer), each for the next
`times` calls (of `method`, or any).

Tests: `pytest_plugins = ["tests.chat_slack_server"]`, then the `slack_server` fixture
(and `slack_workspace`, a Workspace pointed at it). The server is on 127.0.0.1: set
settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32" in a test that calls it.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from chatops.models import Surface, Workspace

TOKEN = "xoxb-test-bot-token"
SIGNING_SECRET = "test-signing-secret-0123456789abcdef"
TEAM = "T0TESTTEAM"
APP = "A0TESTAPP"
CHANNEL = "C0INCIDENTS"
# Form fields Slack takes as JSON strings.
_JSON_FIELDS = ("blocks", "attachments", "view", "metadata")
_CHANNEL_NAME = re.compile(r"^[a-z0-9_-]{1,80}$")


@dataclass
class Call:
    method: str  # "chat.postMessage", or "respond" for a response URL
    body: dict[str, Any]
    thread_ts: str | None
    status: int  # the HTTP status answered (0 while a `hang` holds it)
    error: str = ""  # Slack's error code when it answered ok=false
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Failure:
    method: str | None
    status: int = 200
    retry_after: int = 0
    hang: float = 0.0
    error: str = ""


class SlackError(Exception):
    """Answered as {"ok": false, "error": code}."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class SlackServer:
    def __init__(self, *, token: str = TOKEN, team: str = TEAM) -> None:
        self.token, self.team = token, team
        self.calls: list[Call] = []
        self.messages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.ephemerals: list[dict[str, Any]] = []
        self.channels: dict[str, dict[str, Any]] = {}  # id -> {"name", "members"}
        self.users: dict[str, dict[str, Any]] = {}
        self.views: dict[str, dict[str, Any]] = {}
        self.responses: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.trigger_ttl = 30.0  # Slack's is 3 s; generous so a slow test is not flaky
        self._triggers: dict[str, float] = {}  # id -> when issued
        self._used_triggers: set[str] = set()
        self._failures: list[_Failure] = []
        self._ids = itertools.count(1)
        self._clock = 1_700_000_000
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    # -- addresses ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def api_url(self) -> str:
        """What Workspace.api_url is set to (WebClient's base_url)."""
        return self.url + "/api/"

    def response_url(self) -> str:
        return f"{self.url}/respond/{uuid.uuid4().hex[:12]}"

    def new_trigger(self) -> str:
        """A trigger id views.open accepts once, for `trigger_ttl` seconds."""
        trigger = f"{next(self._ids)}.{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex[:16]}"
        with self._lock:
            self._triggers[trigger] = time.monotonic()
        return trigger

    # -- set-up ------------------------------------------------------------------------

    def add_user(
        self,
        user_id: str,
        name: str,
        *,
        email: str = "",
        confirmed: bool = True,
        real_name: str = "",
    ) -> dict[str, Any]:
        user = {
            "id": user_id,
            "team_id": self.team,
            "name": name,
            "real_name": real_name or name,
            "is_bot": False,
            "is_email_confirmed": confirmed,
            "profile": {"email": email, "real_name": real_name or name, "display_name": name},
        }
        self.users[user_id] = user
        return user

    def fail(
        self,
        status: int = 500,
        *,
        times: int = 1,
        method: str | None = None,
        retry_after: int = 1,
        hang: float = 0.0,
    ) -> None:
        """The next `times` calls (to `method`, or any) answer `status` (429 with
        Retry-After), or with `hang` are held that many seconds first."""
        with self._lock:
            for _ in range(times):
                self._failures.append(_Failure(method, status, retry_after, hang))

    def refuse(self, error: str, *, times: int = 1, method: str | None = None) -> None:
        """The next `times` calls answer {"ok": false, "error": error}."""
        with self._lock:
            for _ in range(times):
                self._failures.append(_Failure(method, error=error))

    # -- what was sent -----------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and c.status == 200 and not c.error]

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        return next((m for m in self.messages[channel] if m["ts"] == ts), None)

    def thread(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """The replies under the message `ts`, oldest first."""
        return [m for m in self.messages[channel] if m.get("thread_ts") == ts]

    def buttons(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """The button elements of the message's actions blocks (as rendered)."""
        message = self.message(channel, ts) or {}
        return [
            element
            for block in message.get("blocks") or []
            if block.get("type") == "actions"
            for element in block.get("elements", [])
            if element.get("type") == "button" and "action_id" in element
        ]

    # -- payloads signed as Slack signs them -------------------------------------------

    def block_actions(self, button: dict[str, Any], **kw: Any) -> dict[str, Any]:
        """A press of a rendered button, with a fresh trigger and response URL."""
        kw.setdefault("trigger_id", self.new_trigger())
        kw.setdefault("response_url", self.response_url())
        kw.setdefault("team_id", self.team)
        return block_actions(action_id=button["action_id"], value=button.get("value", ""), **kw)

    def press(self, channel: str, ts: str, action: str, **kw: Any) -> dict[str, Any]:
        """A press of the button for `action` on the message `ts` in `channel`, as
        posted (its action_id and value), with the message's container."""
        found = [b for b in self.buttons(channel, ts) if b["action_id"].split(":")[0] == action]
        if not found:
            raise LookupError(f"no {action!r} button on {channel}/{ts}")
        kw.setdefault("channel_id", channel)
        kw.setdefault("message_ts", ts)
        return self.block_actions(found[0], **kw)

    def submit(
        self, view_id: str, values: dict[str, str] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """A view_submission of the modal `view_id` as it stands now (its private_metadata
        and hash), with `values` typed into its inputs."""
        view = self.views[view_id]
        kw.setdefault("team_id", self.team)
        return view_submission(
            view_id=view_id,
            private_metadata=view.get("private_metadata", ""),
            values=values,
            view_hash=view["hash"],
            callback_id=view.get("callback_id", ""),
            **kw,
        )

    def command(self, text: str, **kw: Any) -> dict[str, str]:
        kw.setdefault("trigger_id", self.new_trigger())
        kw.setdefault("response_url", self.response_url())
        kw.setdefault("team_id", self.team)
        return command_form(text, **kw)

    # -- the server --------------------------------------------------------------------

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    def _take_failure(self, method: str) -> _Failure | None:
        with self._lock:
            for index, failure in enumerate(self._failures):
                if failure.method in (None, method):
                    return self._failures.pop(index)
        return None

    def _wait(self, seconds: float) -> None:
        self._closing.wait(seconds)

    def _answer(self, method: str, body: dict[str, Any], token: str | None) -> dict[str, Any]:
        if token is None:
            raise SlackError("not_authed")
        if not hmac.compare_digest(token, self.token):
            raise SlackError("invalid_auth")
        handler = _METHODS.get(method)
        if handler is None:
            raise SlackError("unknown_method")
        with self._lock:
            return handler(self, body)


# -- the Web API methods (called with the server's lock held) --------------------------


def _need(body: dict[str, Any], name: str) -> Any:
    value = body.get(name)
    if value in (None, ""):
        raise SlackError(f"invalid_arguments: missing {name}")  # Slack names the field too
    return value


def _auth_test(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "url": "https://example.slack.com/",
        "team": "Example",
        "user": "console",
        "team_id": s.team,
        "user_id": "U0BOT",
        "bot_id": "B0BOT",
    }


def _post_message(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    channel = _need(body, "channel")
    if not (body.get("text") or body.get("blocks")):
        raise SlackError("no_text")
    thread_ts = body.get("thread_ts") or None
    if thread_ts and s.message(channel, thread_ts) is None:
        raise SlackError("thread_not_found")
    s._clock += 1
    ts = f"{s._clock}.{next(s._ids):06d}"
    message = {
        "ts": ts,
        "channel": channel,
        "text": body.get("text", ""),
        "blocks": body.get("blocks") or [],
        "thread_ts": thread_ts,
        "user": "U0BOT",
    }
    s.messages[channel].append(message)
    return {"channel": channel, "ts": ts, "message": message}


def _update(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    channel, ts = _need(body, "channel"), _need(body, "ts")
    message = s.message(channel, ts)
    if message is None:
        raise SlackError("message_not_found")
    message["text"] = body.get("text", message["text"])
    message["blocks"] = body.get("blocks") or []
    message["edited"] = True
    return {"channel": channel, "ts": ts, "text": message["text"]}


def _ephemeral(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    s._clock += 1
    ts = f"{s._clock}.{next(s._ids):06d}"
    s.ephemerals.append(
        {
            "ts": ts,
            "channel": _need(body, "channel"),
            "user": _need(body, "user"),
            "text": body.get("text", ""),
            "blocks": body.get("blocks") or [],
            "thread_ts": body.get("thread_ts") or None,
        }
    )
    return {"message_ts": ts}


def _permalink(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    channel, ts = _need(body, "channel"), _need(body, "message_ts")
    if s.message(channel, ts) is None:
        raise SlackError("message_not_found")
    return {
        "channel": channel,
        "permalink": f"https://example.slack.com/archives/{channel}/p{ts.replace('.', '')}",
    }


def _create(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    name = _need(body, "name")
    if not _CHANNEL_NAME.match(name):
        raise SlackError("invalid_name_specials")
    if any(c["name"] == name for c in s.channels.values()):
        raise SlackError("name_taken")
    channel_id = f"C{next(s._ids):08d}"
    s.channels[channel_id] = {"id": channel_id, "name": name, "members": ["U0BOT"]}
    return {"channel": {"id": channel_id, "name": name, "is_channel": True}}


def _invite(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    channel = s.channels.get(_need(body, "channel"))
    if channel is None:
        raise SlackError("channel_not_found")
    for user in str(_need(body, "users")).split(","):
        if user and user not in s.users:
            raise SlackError("user_not_found")
        if user not in channel["members"]:
            channel["members"].append(user)
    return {"channel": {"id": channel["id"], "name": channel["name"]}}


def _views_open(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    trigger, view = _need(body, "trigger_id"), _need(body, "view")
    issued = s._triggers.get(trigger)
    if issued is None or time.monotonic() - issued > s.trigger_ttl:
        raise SlackError("expired_trigger_id")
    if trigger in s._used_triggers:
        raise SlackError("exchanged_trigger_id")
    s._used_triggers.add(trigger)
    view_id = f"V{next(s._ids):08d}"
    s.views[view_id] = stored = {**view, "id": view_id, "hash": uuid.uuid4().hex[:10]}
    return {"view": stored}


def _views_update(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    view_id, view = _need(body, "view_id"), _need(body, "view")
    if view_id not in s.views:
        raise SlackError("not_found")
    if body.get("hash") and body["hash"] != s.views[view_id]["hash"]:
        raise SlackError("hash_conflict")
    s.views[view_id] = stored = {**view, "id": view_id, "hash": uuid.uuid4().hex[:10]}
    return {"view": stored}


def _users_info(s: SlackServer, body: dict[str, Any]) -> dict[str, Any]:
    user = s.users.get(_need(body, "user"))
    if user is None:
        raise SlackError("user_not_found")
    return {"user": user}


_METHODS = {
    "auth.test": _auth_test,
    "chat.postMessage": _post_message,
    "chat.update": _update,
    "chat.postEphemeral": _ephemeral,
    "chat.getPermalink": _permalink,
    "conversations.create": _create,
    "conversations.invite": _invite,
    "views.open": _views_open,
    "views.update": _views_update,
    "users.info": _users_info,
}


def _decode(content_type: str, raw: bytes, query: str) -> dict[str, Any]:
    body: dict[str, Any] = dict(parse_qsl(query))
    if "json" in content_type:
        body.update(json.loads(raw or b"{}"))
    elif raw:
        body.update(parse_qsl(raw.decode()))
    for name in _JSON_FIELDS:
        if isinstance(body.get(name), str) and body[name][:1] in "[{":
            body[name] = json.loads(body[name])
    return body


def _handler(server: SlackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.do_POST()

        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = _decode(self.headers.get("Content-Type", ""), raw, parts.query)
            except ValueError:
                self._reply(400, {"ok": False, "error": "invalid_json"})
                return
            if parts.path.startswith("/respond/"):
                method = "respond"
            elif parts.path.startswith("/api/"):
                method = parts.path.removeprefix("/api/")
            else:
                self._reply(404, {"ok": False, "error": "not_found"})
                return
            call = Call(
                method, body, body.get("thread_ts") or None, 0, headers=dict(self.headers.items())
            )
            with server._lock:
                server.calls.append(call)
            failure = server._take_failure(method)
            if failure and failure.hang:
                server._wait(failure.hang)
            if failure and failure.status != 200:
                call.status = failure.status
                headers = {"Retry-After": str(failure.retry_after)} if failure.status == 429 else {}
                error = "ratelimited" if failure.status == 429 else "internal_error"
                self._reply(failure.status, {"ok": False, "error": error}, headers)
                return
            if failure and failure.error:
                call.status, call.error = 200, failure.error
                self._reply(200, {"ok": False, "error": failure.error})
                return
            if method == "respond":
                with server._lock:
                    server.responses[parts.path.removeprefix("/respond/")].append(body)
                call.status = 200
                self._reply(200, None)
                return
            auth = self.headers.get("Authorization", "")
            token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
            try:
                answer: dict[str, Any] = {"ok": True, **server._answer(method, body, token)}
            except SlackError as exc:
                call.error = exc.code
                answer = {"ok": False, "error": exc.code}
            call.status = 200
            self._reply(200, answer)

        def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = b"ok" if body is None else json.dumps(body).encode()
            try:
                self.send_response(status)
                kind = "text/plain" if body is None else "application/json; charset=utf-8"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the caller gave up (its deadline cut the connection)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


# -- Slack's side of a request to the console -------------------------------------------


def signed_headers(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack sends: X-Slack-Request-Timestamp and X-Slack-Signature,
    "v0=" + hex HMAC-SHA256 of b"v0:{ts}:" + body with the signing secret."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def slack_post(
    client: Any,
    url: str,
    body: bytes,
    *,
    secret: str = SIGNING_SECRET,
    timestamp: int | None = None,
    retry_num: int | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """POST `body` to the console (a Django test Client) signed as Slack signs it.
    `retry_num` adds X-Slack-Retry-Num (and Retry-Reason) as Slack's retries carry."""
    sent = {**signed_headers(secret, body, timestamp), **(headers or {})}
    if retry_num is not None:
        sent |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
    return client.post(
        url, data=body, content_type="application/x-www-form-urlencoded", headers=sent
    )


def form_body(fields: dict[str, str]) -> bytes:
    """A slash command's form as bytes (what is signed and posted)."""
    return urlencode(fields).encode()


def payload_body(payload: dict[str, Any]) -> bytes:
    """An interactivity request's body: the form field `payload` holding JSON."""
    return urlencode({"payload": json.dumps(payload)}).encode()


def command_form(
    text: str,
    *,
    command: str = "/incident",
    user_id: str = "U0ALICE",
    user_name: str = "alice",
    channel_id: str = CHANNEL,
    team_id: str = TEAM,
    trigger_id: str = "",
    response_url: str = "https://hooks.slack.com/commands/T0TESTTEAM/1/abc",
) -> dict[str, str]:
    return {
        "token": "deprecated-verification-token",
        "team_id": team_id,
        "team_domain": "example",
        "channel_id": channel_id,
        "channel_name": "incidents",
        "user_id": user_id,
        "user_name": user_name,
        "command": command,
        "text": text,
        "api_app_id": APP,
        "response_url": response_url,
        "trigger_id": trigger_id or f"{uuid.uuid4().int % 10**10}.{uuid.uuid4().hex[:12]}",
    }


def block_actions(
    *,
    action_id: str,
    value: str,
    user_id: str = "U0ALICE",
    username: str = "alice",
    team_id: str = TEAM,
    channel_id: str = CHANNEL,
    message_ts: str = "1700000001.000001",
    thread_ts: str | None = None,
    trigger_id: str = "",
    response_url: str = "",
) -> dict[str, Any]:
    """A block_actions payload as Slack sends it for a button press."""
    message: dict[str, Any] = {"type": "message", "ts": message_ts, "text": ""}
    if thread_ts:
        message["thread_ts"] = thread_ts
    return {
        "type": "block_actions",
        "user": {"id": user_id, "username": username, "name": username, "team_id": team_id},
        "api_app_id": APP,
        "token": "deprecated-verification-token",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel_id,
            "is_ephemeral": False,
        },
        "trigger_id": trigger_id or f"{uuid.uuid4().int % 10**10}.{uuid.uuid4().hex[:12]}",
        "team": {"id": team_id, "domain": "example"},
        "channel": {"id": channel_id, "name": "incidents"},
        "message": message,
        "response_url": response_url or "https://hooks.slack.com/actions/T0TESTTEAM/1/abc",
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "actions",
                "value": value,
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def view_submission(
    *,
    view_id: str,
    private_metadata: str,
    values: dict[str, str] | None = None,
    user_id: str = "U0ALICE",
    username: str = "alice",
    team_id: str = TEAM,
    callback_id: str = "chatops",
    view_hash: str = "1700000000.abcdef",
) -> dict[str, Any]:
    """A view_submission payload; `values` are the inputs by name (block_id and
    action_id both the input's name, as render.py builds them)."""
    state = {
        name: {name: {"type": "plain_text_input", "value": value}}
        for name, value in (values or {}).items()
    }
    return {
        "type": "view_submission",
        "team": {"id": team_id, "domain": "example"},
        "user": {"id": user_id, "username": username, "name": username, "team_id": team_id},
        "api_app_id": APP,
        "token": "deprecated-verification-token",
        "trigger_id": f"{uuid.uuid4().int % 10**10}.{uuid.uuid4().hex[:12]}",
        "view": {
            "id": view_id,
            "type": "modal",
            "callback_id": callback_id,
            "hash": view_hash,
            "private_metadata": private_metadata,
            "team_id": team_id,
            "state": {"values": state},
        },
        "response_urls": [],
    }


@pytest.fixture
def slack_server() -> Any:
    server = SlackServer()
    yield server
    server.close()


@pytest.fixture
def slack_workspace(db: Any, slack_server: SlackServer) -> Any:
    """An enabled Slack Workspace pointed at `slack_server` (token, signing secret and
    team as the builders use them)."""
    return Workspace.objects.create(
        name="Slack test",
        surface=Surface.SLACK,
        api_url=slack_server.api_url,
        bot_token=slack_server.token,
        signing_secret=SIGNING_SECRET,
        external_team=TEAM,
        default_channel=CHANNEL,
    )
