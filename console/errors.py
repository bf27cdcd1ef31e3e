class DomainError(Exception):
    """A refused state change, with a message a person can act on."""

    code = "invalid_state"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code:
            self.code = code
