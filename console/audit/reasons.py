"""Audit reasons in the reader's language.

`AuditEvent.reason` is English: admins search it, and the log has no column for parts.
So a writer builds its reason from a registered template (`audit_reason(key, **params)`)
and the /audit/ page matches the stored English back against the templates (`reason_shown`)
and words it in the viewer's language. A reason that matches none (people's words, a
refusal from elsewhere, one cut at 500 characters) is shown as stored, as are rows from
before a template existed whose English differs.

A parameter is shown as stored (names, ids, times), unless its name has a word map
(`words`): the English word written (a contact method's kind, "email") is shown as the
reader's word for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext, gettext_noop

from console.templatetags.viewer import ROLE_LABELS  # the header's role chips say the same
from console.texts.recognise import english_pattern


@dataclass(frozen=True)
class _Shape:
    key: str
    template: str
    pattern: re.Pattern[str]


_SHAPES: dict[str, _Shape] = {}
_WORDS: dict[str, Callable[[str], Any]] = {}


def audit_reasons_register(
    templates: dict[str, str], *, words: dict[str, Callable[[str], Any]] | None = None
) -> None:
    """Register reason templates (gettext_noop English, `%(name)s` parameters), tried in
    the order registered: a more specific one ("... none.") before a general one."""
    for key, template in templates.items():
        known = _SHAPES.get(key)
        if known is not None and known.template != template:
            raise ValueError(f"audit reason {key!r} is registered twice with two wordings")
        _SHAPES[key] = _Shape(key, template, english_pattern(template))
    _WORDS.update(words or {})


def audit_reason(key: str, **params: Any) -> str:
    """The English reason to store (KeyError for an id nobody registered)."""
    return _SHAPES[key].template % {name: str(value) for name, value in params.items()}


def reason_match(reason: str) -> tuple[str, dict[str, str]] | None:
    """(key, params) of the template the stored English was written from, if any."""
    for shape in _SHAPES.values():
        found = shape.pattern.fullmatch(reason)
        if found is not None:
            return shape.key, found.groupdict()
    return None


def reason_shown(reason: str) -> str:
    """The stored reason in the active language (as stored when it matches no template)."""
    found = reason_match(reason or "")
    if found is None:
        return reason or ""
    key, params = found
    shown = {name: _WORDS[name](v) if name in _WORDS else v for name, v in params.items()}
    try:
        return gettext(_SHAPES[key].template) % shown
    except (KeyError, TypeError, ValueError):  # a translation that lost a parameter
        return reason


# The console's own reasons (console/audit/services.py, console/oidc/, console/api_tokens/).
WRONG_PASSWORD = "audit.login.wrong_password"  # noqa: S105  (a message id)
LOCKED_OUT = "audit.login.locked_out"
PASSWORD_OFF = "audit.login.password_off"  # noqa: S105  (a message id)
GROUPS_NONE = "audit.oidc.groups_none"
GROUPS = "audit.oidc.groups"
REVOKED_OWN = "audit.token.revoked_own"
REVOKED_BY = "audit.token.revoked_by"
PASSWORD_CHANGED = "audit.token.password_changed"  # noqa: S105  (a message id)
DEACTIVATED = "audit.token.deactivated"
PASSWORD_CHANGED_DEACTIVATED = "audit.token.password_changed_deactivated"  # noqa: S105  (a message id)
ROLE_LOWERED = "audit.token.role_lowered"
NO_ROLE = "none"  # how a reason names "no role"


def _role(name: str) -> Any:
    if name == NO_ROLE:
        return gettext("no role")
    return ROLE_LABELS.get(name, name)


audit_reasons_register(
    {
        WRONG_PASSWORD: gettext_noop("Wrong username or password."),
        LOCKED_OUT: gettext_noop(
            "Locked out after too many failed logins (see Axes in the admin)."
        ),
        PASSWORD_OFF: gettext_noop("Password login is turned off (PASSWORD_LOGIN=0)."),
        GROUPS_NONE: gettext_noop("Groups claimed at sign-in: none."),
        GROUPS: gettext_noop("Groups claimed at sign-in: %(groups)s."),
        REVOKED_OWN: gettext_noop("Revoked by its owner."),
        REVOKED_BY: gettext_noop("Revoked by %(user)s."),
        # console/api_tokens/revocation.py: why every token of a user was ended.
        PASSWORD_CHANGED_DEACTIVATED: gettext_noop("Password changed. Account deactivated."),
        PASSWORD_CHANGED: gettext_noop("Password changed."),
        DEACTIVATED: gettext_noop("Account deactivated."),
        ROLE_LOWERED: gettext_noop("Role changed from %(role_before)s to %(role_after)s."),
    },
    words={"role_before": _role, "role_after": _role},
)
