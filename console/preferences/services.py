"""Writes and reads of a user's language and time preference.

The preference lives in the database so it follows the user to another browser, and is
copied into the session at login so applying it (console/viewer.py) costs no query.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth import user_logged_in
from django.contrib.auth.models import User
from django.http import HttpRequest

from console.errors import DomainError
from console.preferences.models import UserPreference

SESSION_LANGUAGE = "console.language"
SESSION_UTC = "console.utc"


def supported_language(code: str) -> bool:
    return code in {c for c, _ in settings.LANGUAGES}


def preference_set(
    *, user: User, language: str | None = None, show_utc: bool | None = None
) -> UserPreference:
    """Saves what is given (None: unchanged). An empty language means: follow the browser."""
    if language is not None and language and not supported_language(language):
        choices = ", ".join(c for c, _ in settings.LANGUAGES)
        raise DomainError(f"Unknown language {language!r}; choose one of {choices}.")
    changes: dict[str, Any] = {}
    if language is not None:
        changes["language"] = language
    if show_utc is not None:
        changes["show_utc"] = show_utc
    pref, _ = UserPreference.objects.update_or_create(user=user, defaults=changes)
    return pref


def preference_to_session(request: HttpRequest, pref: UserPreference | None) -> None:
    """Puts the saved choice where the middleware reads it (nothing saved: the browser's)."""
    session = request.session
    if pref is not None and pref.language:
        session[SESSION_LANGUAGE] = pref.language
    else:
        session.pop(SESSION_LANGUAGE, None)
    session[SESSION_UTC] = bool(pref and pref.show_utc)


def preference_get(*, user: User) -> UserPreference | None:
    return UserPreference.objects.filter(user=user).first()


def _on_logged_in(sender: Any, request: HttpRequest | None, user: User, **kw: Any) -> None:
    # API token logins send the signal with a request that has no session.
    if request is not None and hasattr(request, "session"):
        preference_to_session(request, preference_get(user=user))


def connect() -> None:
    """Called once from ConsoleConfig.ready."""
    user_logged_in.connect(_on_logged_in, dispatch_uid="console.preferences.services.logged_in")
