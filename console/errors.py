"""Refusals with a message a person can act on, in two languages at once.

A message is an English %-format marked with gettext_noop, and its named params: str()
of the error is English (the API answers it and logs record it, whatever the request's
language), `translated()` is in the active language (pages show it). A param that is a
lazy string (gettext_lazy) is English in the first and translated in the second.
"""

from collections.abc import Mapping

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.utils import translation
from django.utils.translation import gettext


def _format(text: str, params: Mapping[str, object]) -> str:
    return text % params if params else text


class Translatable:
    """What a refusal adds to its exception class: the message kept for translation."""

    message: str = ""
    params: Mapping[str, object] = {}

    def _keep(self, message: str, params: Mapping[str, object] | None) -> str:
        """Keep the message for `translated()`; return it in English for the exception."""
        self.message, self.params = str(message), dict(params or {})
        with translation.override(None):  # no catalogue: msgids and lazy params as written
            return _format(self.message, self.params)

    def translated(self) -> str:
        return _format(gettext(self.message), self.params)


class DomainError(Translatable, Exception):
    """A refused state change, with a message a person can act on."""

    code = "invalid_state"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        params: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(self._keep(message, params))
        if code:
            self.code = code


class NotFound(DomainError, Http404):
    """The row a request names does not exist. A refusal like any other for the services'
    callers (code "not_found": the API answers 404), and an Http404 for Django, so a page
    that lets it through answers the 404 page without catching it."""

    code = "not_found"


class NotAllowed(Translatable, PermissionDenied):
    """PermissionDenied whose message pages translate (the API answers it in English)."""

    def __init__(self, message: str, *, params: Mapping[str, object] | None = None) -> None:
        super().__init__(self._keep(message, params))


def page_message(exc: BaseException) -> str:
    """An error's message for a page, in the active language. A plain exception's fixed
    message is looked up in the catalogue as it is (untranslated if it is not there)."""
    if isinstance(exc, Translatable):
        return exc.translated()
    text = str(exc)
    return gettext(text) if text else ""
