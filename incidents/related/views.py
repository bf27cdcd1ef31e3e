"""The incident page's related-incidents panel ("Related incidents" on a lead, "Part of
#N" on the others) and its two buttons. The panel loads itself (htmx), so the page costs
no query for it; it re-renders when the incident changes."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from console.bounds import parse_id
from console.errors import DomainError
from console.http import AuthedRequest
from console.web import CHANGED_EVENT, FLASH_CLEARED, console_view, refused
from incidents import permissions as perms
from incidents import selectors
from incidents.related.lead_work import lead_work
from incidents.related.selectors import incident_related
from incidents.related.services import incident_related_merge, incident_related_unlink


def _context(request: AuthedRequest, pk: int) -> dict:
    incident = selectors.incident_get(incident_id=pk)
    related = incident_related(incident=incident)
    lead = related.lead
    return {
        "incident": incident,
        "related": related,
        "lead_work": lead_work(lead.pk) if lead is not None and lead.is_open else [],
        "can_link": request.user.has_perm(perms.ACKNOWLEDGE),
    }


@require_GET
@console_view(perms.VIEW)
def incident_related_panel(request: AuthedRequest, pk: int):
    return render(request, "incidents/_related.html", _context(request, pk))


def _act(request: AuthedRequest, pk: int, call, done: str, back: int):
    """`page`: the incident whose page the button is on (the lead's lists its related
    incidents' buttons); its panel is what an htmx answer re-renders."""
    page = parse_id(request.POST.get("page")) or pk
    try:
        call()
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=reverse("incidents:detail", args=[page]))
    if not request.htmx:
        messages.success(request, done)
        return redirect("incidents:detail", pk=back)
    response = render(request, "incidents/_related.html", _context(request, page))
    response.write(FLASH_CLEARED)
    return trigger_client_event(response, CHANGED_EVENT)


@require_POST
@console_view()
def incident_related_merge_view(request: AuthedRequest, pk: int):
    """Merge incident `pk` into its lead; a plain form lands on the lead's page."""
    lead_id = selectors.incident_get(incident_id=pk).related_to_id or pk

    def call():
        incident_related_merge(incident_id=pk, actor=request.user)

    done = _("Incident #%(id)s merged into #%(lead)s.") % {"id": pk, "lead": lead_id}
    return _act(request, pk, call, done, back=lead_id)


@require_POST
@console_view()
def incident_related_unlink_view(request: AuthedRequest, pk: int):
    """Unlink incident `pk` from its lead."""

    def call():
        incident_related_unlink(incident_id=pk, actor=request.user)

    done = _("Incident #%(id)s unlinked; it stands alone.") % {"id": pk}
    return _act(request, pk, call, done, back=parse_id(request.POST.get("page")) or pk)
