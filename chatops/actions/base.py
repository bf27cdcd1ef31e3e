"""What every chat action is given (Context) and gives back (Result).

An action runs on the worker, under the reader's language and `acting_through(surface)`,
as the console user the chat user is mapped to. It calls the services the web uses and
never re-checks a rule itself: a refusal is the service's DomainError or PermissionDenied,
which chatops/services/interactions.py turns into the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext_noop

from chatops import replies
from chatops.messages import Button, Dialog, Message
from chatops.models import ChatInteraction, ChatPost, ChatThread, InteractionStatus, Workspace
from console.errors import DomainError, NotAllowed, Translatable

# Actions an unmapped chat user may run, and that the rate limit does not count.
READ_ONLY = frozenset({"status", "help"})


class Said(Translatable):
    """A message kept for two readers: `english` (the record, the audit log) and
    translated() (the person, in the active language)."""

    def __init__(self, message: str, params: Mapping[str, object] | None = None) -> None:
        self.english = self._keep(message, params)


@dataclass(frozen=True)
class Result:
    said: str  # English: ChatInteraction.outcome and the audit log
    message: Message | None  # the answer (None: the action answered already, a dialog)
    status: str = InteractionStatus.DONE
    incident_id: int | None = None
    run_id: int | None = None


def done(
    message: str,
    params: Mapping[str, object] | None = None,
    *,
    lines: tuple[str, ...] = (),
    buttons: tuple[Button, ...] = (),
    incident_id: int | None = None,
    run_id: int | None = None,
    status: str = InteractionStatus.DONE,
) -> Result:
    said = Said(message, params)
    return Result(
        said=said.english,
        message=replies.text_message(said.translated(), lines=lines, buttons=buttons),
        status=status,
        incident_id=incident_id,
        run_id=run_id,
    )


def _number(value: Any) -> int | None:
    text = str(value if value is not None else "").strip().lstrip("#")
    return int(text) if text.isdigit() and 0 < int(text) < 10**12 else None


@dataclass
class Context:
    interaction: ChatInteraction
    workspace: Workspace
    user: User | None  # None: unmapped (only READ_ONLY actions run)
    language: str
    args: dict[str, Any] = field(default_factory=dict)
    answers: int = 0  # replies and dialogs sent so far (each post's key is numbered)
    run_id: int | None = None  # the action run named, for the audit row even when refused

    @property
    def surface(self) -> str:
        return self.workspace.surface

    @property
    def channel(self) -> str:
        return str(self.args.get("channel", ""))

    @property
    def trigger(self) -> str:
        return str(self.args.get("trigger", ""))

    def actor(self) -> User:
        if self.user is None:  # interaction_run refuses this before; never act as nobody
            raise NotAllowed(gettext_noop("You are not linked to a console account."))
        return self.user

    def number(self, name: str) -> int | None:
        return _number(self.args.get(name))

    def incident_maybe(self) -> int | None:
        """The incident named (#id), else the one whose own channel this is, else None."""
        found = self.number("incident")
        if found is None and self.channel:
            found = (
                ChatThread.objects.filter(
                    workspace=self.workspace, channel=self.channel, own_channel=True
                )
                .values_list("incident_id", flat=True)
                .first()
            )
        if found is not None:
            self.interaction.incident_id = found
        return found

    def incident_id(self) -> int:
        found = self.incident_maybe()
        if found is None:
            raise DomainError(
                gettext_noop("Which incident? Name it with its number, like #42."),
                code="invalid",
            )
        return found

    def reply(self, message: Message) -> ChatPost | None:
        self.answers += 1
        return replies.reply_send(interaction=self.interaction, message=message, n=self.answers)

    def dialog(self, dialog: Dialog, *, dialog_id: str = "") -> ChatPost | None:
        self.answers += 1
        return replies.dialog_send(
            interaction=self.interaction, dialog=dialog, n=self.answers, dialog_id=dialog_id
        )
