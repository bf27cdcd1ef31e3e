"""The pages list: every page sent, with each delivery tried (method, state, attempts,
error, time), filtered by team, person and status."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.bounds import parse_id
from console.http import AuthedRequest
from console.web import console_view
from pager.models import PageStatus, Team
from pager.permissions import VIEW
from pager.views import selectors
from pager.views.common import display_zone, shown_in

PER_PAGE = 25


@require_GET
@console_view(VIEW)
def page_list(request: AuthedRequest):
    team_id = parse_id(request.GET.get("team"))
    user_id = parse_id(request.GET.get("person"))
    status = str(request.GET.get("status", ""))
    if status not in PageStatus.values:
        status = ""
    pages = selectors.pages_list(team_id=team_id, user_id=user_id, status=status)
    page = Paginator(pages, PER_PAGE).get_page(request.GET.get("page"))
    people = (
        get_user_model().objects.filter(is_active=True).only("id", "username").order_by("username")
    )
    zone = display_zone(request)
    teams = list(Team.objects.order_by("name").values_list("pk", "name"))
    context = {
        "page": page,
        "filters": {"team": team_id, "person": user_id, "status": status},
        "filtered": bool(team_id or user_id or status),
        "teams": teams,
        "people": list(people.values_list("pk", "username")),
        "statuses": PageStatus.choices,
        "any_team": bool(teams),
        "zone": zone,
    }
    with shown_in(zone):
        return render(request, "pager/pages.html", context)
