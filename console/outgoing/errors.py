"""The two ways an outgoing call ends early: the guard refused its URL, or its overall
deadline passed."""

from collections.abc import Mapping

import requests

from console.errors import Translatable


class OutgoingRefused(Translatable, Exception):
    """A URL the guard refuses. str() is English (delivery rows and logs keep it),
    `translated()` is in the active language (the admin form shows it)."""

    def __init__(self, message: str, *, params: Mapping[str, object] | None = None) -> None:
        super().__init__(self._keep(message, params))


class DeadlineExceeded(requests.Timeout):
    """The call's overall deadline (connect and every read together) passed. A
    requests.Timeout, so handlers written for requests' own timeouts catch it too."""


def failure_reason(exc: BaseException) -> str:
    """The innermost cause of a failed call ("Connection refused"), not requests' nested
    repr: what a person reads in a delivery row or a drill's error."""
    cause: BaseException = exc
    while cause.__cause__ is not None or (
        cause.__context__ is not None and not cause.__suppress_context__
    ):
        cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
    text = str(cause) or type(cause).__name__
    return text.rsplit("] ", 1)[-1][:200]
