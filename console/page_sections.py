"""Sections a higher app adds to a lower app's page, registered from its
AppConfig.ready(): the incident page's panels (incidents/panels.py) and the runbook page's
sections (runbooks/sections.py) are two registries of this one kind.

The page knows no other app's URLs or templates: its template tag renders each registered
section's template, in `order`, with the page's context plus what the section's
`context(request, subject)` returns. A context function runs on every page view: keep it
free of queries (or few and constant), or the page's query count grows with the sections.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.template import Context
from django.utils.safestring import SafeString, mark_safe

SectionContext = Callable[[Any, Any], dict[str, Any]]  # (request, subject) -> extra context


@dataclass(frozen=True)
class PageSection:
    key: str
    order: int
    template: str
    context: SectionContext | None = None


class PageSections:
    """One page's registry. `what` names a section in errors ("incident panel")."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.sections: dict[str, PageSection] = {}

    def register(
        self, *, key: str, order: int, template: str, context: SectionContext | None = None
    ) -> None:
        """Add a section (re-registering the same key with the same definition is a no-op)."""
        section = PageSection(key=key, order=order, template=template, context=context)
        known = self.sections.get(key)
        if known is not None and known != section:
            raise ImproperlyConfigured(f"A {self.what} {key!r} is already registered.")
        self.sections[key] = section

    def ordered(self) -> list[PageSection]:
        return sorted(self.sections.values(), key=lambda s: (s.order, s.key))

    def render(self, context: Context, **subject: Any) -> SafeString:
        """Render every section into the page, as {% include %} would: the page's context
        (request, perms, csrf_token) plus the subject and the section's own, without
        running the context processors again. `subject` is one keyword: the page's object."""
        ((_, obj),) = subject.items()
        request = context.get("request")
        page = context.template
        assert page is not None  # a template tag renders inside a template
        engine = page.engine
        parts = []
        for section in self.ordered():
            extra = section.context(request, obj) if section.context is not None else {}
            with context.push(**subject, **extra):
                parts.append(engine.get_template(section.template).render(context))
        # Each part is a rendered template, autoescaped by the template engine.
        return mark_safe("".join(parts))  # noqa: S308
