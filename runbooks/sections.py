"""Sections other apps add to a runbook's page, registered from their AppConfig.ready().

The runbook page knows no other app's templates or reads: `{% runbook_sections runbook %}`
(runbooks/templatetags/runbook_sections.py) renders each registered section's template, in
`order`, with the page's context plus what the section's `context(request, runbook)`
returns (drills registers when the runbook's drill last passed). A section's context runs
on every view of the page: keep its queries few and constant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

SectionContext = Callable[[Any, Any], dict[str, Any]]  # (request, runbook) -> extra context


@dataclass(frozen=True)
class RunbookSection:
    key: str
    order: int
    template: str
    context: SectionContext | None = None


_SECTIONS: dict[str, RunbookSection] = {}


def runbook_section_register(
    *, key: str, order: int, template: str, context: SectionContext | None = None
) -> None:
    """Add a section (re-registering the same key with the same definition is a no-op)."""
    section = RunbookSection(key=key, order=order, template=template, context=context)
    known = _SECTIONS.get(key)
    if known is not None and known != section:
        raise ImproperlyConfigured(f"A runbook page section {key!r} is already registered.")
    _SECTIONS[key] = section


def runbook_sections() -> list[RunbookSection]:
    return sorted(_SECTIONS.values(), key=lambda s: (s.order, s.key))
