"""Panels other apps add to the incident page, registered from their AppConfig.ready().

The incident page knows no other app's URLs or templates: `{% incident_panels incident %}`
(incidents/templatetags/incident_panels.py) renders each registered panel's template,
in `order`, with the page's context plus what the panel's `context(request, incident)`
returns. A panel that loads itself over htmx builds its URL with `{% url %}` in its own
template. A context function runs on every page view: keep it free of queries, or the
page's query count grows with the number of panels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

PanelContext = Callable[[Any, Any], dict[str, Any]]  # (request, incident) -> extra context


@dataclass(frozen=True)
class IncidentPanel:
    key: str
    order: int
    template: str
    context: PanelContext | None = None


_PANELS: dict[str, IncidentPanel] = {}


def incident_panel_register(
    *, key: str, order: int, template: str, context: PanelContext | None = None
) -> None:
    """Add a panel (re-registering the same key with the same definition is a no-op)."""
    panel = IncidentPanel(key=key, order=order, template=template, context=context)
    known = _PANELS.get(key)
    if known is not None and known != panel:
        raise ImproperlyConfigured(f"An incident panel {key!r} is already registered.")
    _PANELS[key] = panel


def incident_panels() -> list[IncidentPanel]:
    return sorted(_PANELS.values(), key=lambda p: (p.order, p.key))
