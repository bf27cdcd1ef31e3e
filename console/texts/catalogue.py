"""The one registry of message templates: id -> English template (a gettext_noop string,
or a lazy proxy such as ngettext_lazy(singular, plural, "count") when the wording depends
on a number or needs a context). Each app registers its own ids, prefixed with its name.
"""

from __future__ import annotations

from typing import Any

from django.utils.functional import Promise

Template = "str | Promise"
_TEMPLATES: dict[str, Any] = {}


def texts_register(templates: dict[str, Any]) -> None:
    """Register ids; the same id twice must be the same template (a module imported
    twice), never two wordings."""
    for key, template in templates.items():
        if not isinstance(template, (str, Promise)):
            raise TypeError(f"message {key!r}: a template is a string or a lazy string")
        known = _TEMPLATES.get(key)
        if known is not None and known is not template and str(known) != str(template):
            raise ValueError(f"message id {key!r} is registered twice with two wordings")
        _TEMPLATES[key] = template


def template_for(key: str) -> Any:
    """The registered template; KeyError for an id nobody registered."""
    return _TEMPLATES[key]


def known_ids() -> list[str]:
    return sorted(_TEMPLATES)
