"""Is this request from Slack, for this workspace, and recent? Slack signs every request
with the app's signing secret: X-Slack-Signature is "v0=" + hex HMAC-SHA256 of
"v0:{X-Slack-Request-Timestamp}:{raw body}". The comparison is slack_sdk's
SignatureVerifier (hmac.compare_digest, constant time); the window is ours
(CHAT_REQUEST_MAX_AGE_SECONDS either way: a replay of an old signed request is stale, a
timestamp from the future is refused too), each refusal with its own message."""

from __future__ import annotations

import time
from collections.abc import Mapping

from django.conf import settings
from slack_sdk.signature import Clock, SignatureVerifier

from chatops.models import Workspace
from chatops.refusals import RequestRefused

TIMESTAMP = "x-slack-request-timestamp"
SIGNATURE = "x-slack-signature"


class _At(Clock):
    """slack_sdk's verifier has its own fixed 5-minute window; the window here is ours,
    checked before, so its clock is set to the request's own time."""

    def __init__(self, when: int) -> None:
        self.when = when

    def now(self) -> float:
        return float(self.when)


def slack_request_verify(workspace: Workspace, headers: Mapping[str, str], body: bytes) -> None:
    """Return when the request is signed by the workspace's secret within the window;
    raise RequestRefused (401) naming the problem otherwise."""
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}
    raw_ts, signature = lowered.get(TIMESTAMP, "").strip(), lowered.get(SIGNATURE, "").strip()
    if not raw_ts or not signature:
        missing = " and ".join(
            name for name, value in (("X-Slack-Request-Timestamp", raw_ts),
                                     ("X-Slack-Signature", signature)) if not value
        )  # fmt: skip
        raise RequestRefused(f"missing {missing}: not a signed Slack request", status=401)
    try:
        when = int(raw_ts)
    except ValueError:
        raise RequestRefused("X-Slack-Request-Timestamp is not a number", status=401) from None
    skew = time.time() - when
    window = settings.CHAT_REQUEST_MAX_AGE_SECONDS
    if skew > window:
        raise RequestRefused(
            f"stale request: signed {int(skew)} s ago, more than the {window} s allowed "
            "(a replay, or the server's clock is wrong)",
            status=401,
        )
    if -skew > window:
        raise RequestRefused(
            f"stale request: its timestamp is {int(-skew)} s in the future "
            "(check the server's clock)",
            status=401,
        )
    secret = str(workspace.signing_secret or "")
    if not secret.strip():
        raise RequestRefused("this workspace has no signing secret", status=401)
    verifier = SignatureVerifier(secret, clock=_At(when))
    if not verifier.is_valid(body=body, timestamp=raw_ts, signature=signature):
        raise RequestRefused(
            "forged request: the signature does not match the body signed with this "
            "workspace's signing secret",
            status=401,
        )
