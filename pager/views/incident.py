"""The incident page's pager panel, loaded over htmx by templates/pager/_incident_panel.html
(registered in PagerConfig.ready()) and refreshed with the page."""

from __future__ import annotations

from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from console.http import AuthedRequest
from console.web import console_view, perform
from incidents.models import Incident
from pager.escalation.services import paging_stop
from pager.panel import panel_context
from pager.permissions import VIEW
from pager.views.common import display_zone, shown_in


@require_GET
@console_view(VIEW)
def incident_panel(request: AuthedRequest, incident_id: int):
    incident = get_object_or_404(Incident, pk=incident_id)
    context = panel_context(incident)
    zone = display_zone(request)
    context["zone"] = zone
    context["oncall_zoned"] = [
        (schedule, oncall, zone.for_schedule(schedule.time_zone))
        for schedule, oncall in context["oncall"]
    ]
    with shown_in(zone):
        return render(request, "pager/_incident_panel_body.html", context)


@require_POST
@console_view(VIEW)
def incident_paging_stop(request: AuthedRequest, incident_id: int):
    """ "I have it": stop a re-paging round of an incident acknowledged already."""
    return perform(
        request,
        lambda: paging_stop(incident_id=incident_id, actor=request.user),
        done=_("Paging stopped: you are on it."),
        back=reverse("incidents:detail", args=[incident_id]),
    )
