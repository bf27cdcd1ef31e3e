"""A request from chat the console will not take: forged, stale, malformed, from another
workspace. The surface's view answers `status` with {"error": message}; the message is
English (chat servers and logs read it, not a person in a page) and names the problem."""

from __future__ import annotations


class RequestRefused(Exception):
    def __init__(self, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.message, self.status = message, status

    def __str__(self) -> str:
        return self.message
