"""Which surface a person is acting through: the console's pages and API ("console"), or
a chat (chatops/ sets "slack" or "mattermost" around the service call). Services write it
as the timeline event's source, so the timeline says where each action came from without
every service taking a parameter for it."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

CONSOLE = "console"

_surface: contextvars.ContextVar[str] = contextvars.ContextVar("console_surface", default=CONSOLE)


def current_surface() -> str:
    return _surface.get()


@contextmanager
def acting_through(surface: str) -> Iterator[None]:
    token = _surface.set(surface)
    try:
        yield
    finally:
        _surface.reset(token)
