"""GET /audit/: the sign-in audit log, for admins (read-only, newest first)."""

from django.core.paginator import Paginator
from django.shortcuts import render
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from console.audit.models import AuditKind
from console.audit.services import audit_event_list
from console.http import AuthedRequest
from console.web import console_view

VIEW_AUDIT = "console.view_auditevent"
PER_PAGE = 50
KIND_FILTERS = {"": gettext_lazy("All"), **dict(AuditKind.choices)}


@require_GET
@console_view(VIEW_AUDIT)
def audit_list(request: AuthedRequest):
    kind = request.GET.get("kind", "")
    if kind not in KIND_FILTERS:
        kind = ""
    username = request.GET.get("user", "").strip()[:150]
    events = audit_event_list(kind=kind, username=username)
    page = Paginator(events, PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "kind": kind,
        "kind_filters": KIND_FILTERS.items(),
        "username": username,
    }
    return render(request, "console/audit.html", context)
