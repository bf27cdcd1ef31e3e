"""A request from chat once its surface has verified and parsed it: the same shape for
Slack and Mattermost, so everything after the surface's view is shared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ChatRequest:
    surface: str  # chatops.models.Surface
    workspace_id: int
    kind: str  # chatops.models.InteractionKind
    # Unique per request: the trigger id chat gives every press, command and dialog
    # submission (else a digest of the body). A retry or a replay carries the same key.
    key: str
    external_user: str
    action: str  # a name in chatops/actions.py
    external_name: str = ""
    incident_id: int | None = None
    args: dict[str, Any] = field(default_factory=dict)
    channel: str = ""
    thread: str = ""  # the message the press was on (Slack ts, Mattermost post id)
    reply_url: str = ""  # Slack's response_url (checked by the surface); "" for Mattermost
    trigger: str = ""  # opens a dialog for a few seconds
    retry: int = 0  # Slack's X-Slack-Retry-Num
