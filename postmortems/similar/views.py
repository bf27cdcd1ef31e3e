"""The incident page's "Similar past incidents" panel (an htmx partial, so the incident
page itself pays no query for it)."""

from __future__ import annotations

from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from console.http import AuthedRequest
from console.web import console_view
from incidents.permissions import VIEW
from incidents.selectors import incident_get
from postmortems.similar.selectors import incident_similar


@require_GET
@console_view(VIEW)
def incident_similar_partial(request: AuthedRequest, incident_id: int):
    incident = incident_get(incident_id=incident_id)
    context = {
        "incident": incident,
        "similar": incident_similar(incident=incident),
        "today": timezone.localdate(),
    }
    return render(request, "postmortems/_similar.html", context)
