"""What each button, dialog and `/incident` command does (chatops/messages.py names them
by `action`): one function per action name, each calling the service the console's pages
call, as the mapped console user. READ_ONLY ones run for unmapped chat users too and are
not counted by the rate limit."""

from __future__ import annotations

from collections.abc import Callable

from chatops.actions.base import READ_ONLY, Context, Result
from chatops.actions.declare import declare, help_, page
from chatops.actions.incident import ack, command, mitigate, note, resolve, silence, status
from chatops.actions.runs import approve, reject, request, request_confirm

ACTIONS: dict[str, Callable[[Context], Result]] = {
    "ack": ack,
    "command": command,
    "silence": silence,
    "mitigate": mitigate,
    "resolve": resolve,
    "request": request,
    "request_confirm": request_confirm,
    "approve": approve,
    "reject": reject,
    "status": status,
    "note": note,
    "declare": declare,
    "page": page,
    "help": help_,
}

__all__ = ["ACTIONS", "READ_ONLY", "Context", "Result"]
