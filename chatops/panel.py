"""What the incident page's chat panel shows (templates/chatops/_incident_panel.html):
the incident's threads, one per installation, with where they are and how their posts
went. Registered from ChatopsConfig.ready() with `panel_context` as its context.

One query when no chat was ever installed (the panel shows nothing), two otherwise (the
installations, then the incident's threads with their post counts).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from chatops import selectors
from chatops.models import Workspace
from incidents.models import Incident


def panel_context(request: HttpRequest | None, incident: Incident) -> dict[str, Any]:
    enabled = list(Workspace.objects.values_list("enabled", flat=True))
    if not enabled:
        return {"chat_threads": [], "chat_installed": False}
    threads = selectors.incident_threads(incident.pk)
    # A disabled installation's old threads still show; a new thread needs an enabled one.
    return {"chat_threads": threads, "chat_installed": bool(threads) or any(enabled)}
