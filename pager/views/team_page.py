"""The incident page's "Page a team" form (in the pager panel): page a team's on-call
people now for the incident (pager/paging/services/manual.py)."""

from __future__ import annotations

from uuid import uuid4

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from console.errors import DomainError
from console.http import AuthedRequest
from console.web import console_view, refused
from incidents.models import Incident
from pager.models import Team
from pager.paging.services.manual import MESSAGE_MAX_CHARS, PAGE_TEAM, oncall_page


@require_GET
@console_view(PAGE_TEAM)
def incident_page_form(request: AuthedRequest, incident_id: int):
    """The form, loaded once into the panel (not with its refresh, which would wipe what
    is typed). Its key makes a double submit one request."""
    incident = get_object_or_404(Incident, pk=incident_id)
    context = {
        "incident": incident,
        "teams": Team.objects.order_by("name").only("slug", "name"),
        "key": uuid4().hex,
        "message_max": MESSAGE_MAX_CHARS,
    }
    return render(request, "pager/_page_team_form.html", context)


@require_POST
@console_view(PAGE_TEAM)
def incident_page_team(request: AuthedRequest, incident_id: int):
    back = reverse("incidents:detail", args=[incident_id])
    slug = request.POST.get("team", "")
    try:
        pages = oncall_page(
            actor=request.user,
            team_slug=slug,
            incident_id=incident_id,
            message=request.POST.get("message", ""),
            key=request.POST.get("key") or None,
        )
    except (PermissionDenied, DomainError) as exc:
        if isinstance(exc, DomainError) and exc.code == "not_found":
            # An unknown team is the form's to say, not a 404 page.
            messages.error(request, exc.translated())
            return redirect(back)
        return refused(request, exc, back=back)
    team = Team.objects.filter(slug=slug).values_list("name", flat=True).first() or slug
    names = ", ".join(p.user.get_username() for p in pages if p.user is not None)
    messages.success(
        request,
        ngettext(
            "Paged %(count)s person on call in team %(team)s: %(names)s.",
            "Paged %(count)s people on call in team %(team)s: %(names)s.",
            len(pages),
        )
        % {"count": len(pages), "team": team, "names": names or _("nobody")},
    )
    return redirect(back)
