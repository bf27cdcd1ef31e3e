from django.http import Http404


class DomainError(Exception):
    """A refused state change, with a message a person can act on."""

    code = "invalid_state"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code:
            self.code = code


class NotFound(DomainError, Http404):
    """The row a request names does not exist. A refusal like any other for the services'
    callers (code "not_found": the API answers 404), and an Http404 for Django, so a page
    that lets it through answers the 404 page without catching it."""

    code = "not_found"
