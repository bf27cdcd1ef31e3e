"""Is this request from our Mattermost? A slash command carries the command's token
(compared in constant time with the workspace's signing secret). Mattermost signs neither
button presses nor dialog submissions, so the console signs what it puts in them: each
button's `context` and each dialog's `state` carry the action and its value signed with a
key derived from the workspace's secret and SECRET_KEY (django.core.signing, with a
timestamp: older than CHAT_ACTION_MAX_AGE_SECONDS is stale). A press can then only run
what the console itself offered, in this workspace. Rotating the secret voids the
buttons already posted (their presses are refused as forged)."""

from __future__ import annotations

import hmac
from typing import Any

from django.conf import settings
from django.core import signing
from django.utils.crypto import salted_hmac

from chatops.models import Workspace
from chatops.refusals import RequestRefused

SALT = "chatops.mattermost"


def command_token_check(workspace: Workspace, token: str) -> None:
    """Refuse (401) a slash command whose `token` is not the workspace's."""
    if not token:
        raise RequestRefused(message="missing the slash command's token", status=401)
    expected = str(workspace.signing_secret or "")
    if not expected or not hmac.compare_digest(token.encode(), expected.encode()):
        raise RequestRefused(
            message="wrong slash command token: it must be the workspace's signing secret",
            status=401,
        )


def _key(workspace: Workspace) -> str:
    # Per workspace, and useless without SECRET_KEY: a leaked command token alone does not
    # let anyone forge a button.
    return salted_hmac(
        SALT + ".key", str(workspace.signing_secret or ""), secret=settings.SECRET_KEY
    ).hexdigest()


def action_context_sign(workspace: Workspace, action: str, value: dict[str, Any]) -> dict[str, Any]:
    """A button's integration context: the action and value in clear (for people reading
    the post's JSON) and signed (what the console trusts)."""
    signature = signing.dumps(
        {"action": action, "value": value}, key=_key(workspace), salt=SALT, compress=True
    )
    return {"action": action, "value": value, "signature": signature}


def action_context_verify(workspace: Workspace, context: Any) -> tuple[str, dict[str, Any]]:
    """The (action, value) signed in `context`; RequestRefused(401) when missing, forged
    or stale. The clear copies are not trusted: only what was signed counts."""
    signature = context.get("signature") if isinstance(context, dict) else None
    if not isinstance(signature, str) or not signature:
        raise RequestRefused(message="missing the action's signature in context", status=401)
    try:
        signed = signing.loads(
            signature,
            key=_key(workspace),
            salt=SALT,
            max_age=settings.CHAT_ACTION_MAX_AGE_SECONDS,
        )
    except signing.SignatureExpired:
        raise RequestRefused(
            message="stale action: the message is older than CHAT_ACTION_MAX_AGE_SECONDS",
            status=401,
        ) from None
    except signing.BadSignature:
        raise RequestRefused(message="forged action: bad signature", status=401) from None
    action, value = signed.get("action"), signed.get("value")
    if not isinstance(action, str) or not isinstance(value, dict):
        raise RequestRefused(message="forged action: bad signed content", status=401)
    return action, value


def dialog_state_sign(workspace: Workspace, action: str, value: dict[str, Any]) -> str:
    """A dialog's `state` (a string in Mattermost): the signature alone."""
    return str(action_context_sign(workspace, action, value)["signature"])


def dialog_state_verify(workspace: Workspace, state: Any) -> tuple[str, dict[str, Any]]:
    return action_context_verify(workspace, {"signature": state})
