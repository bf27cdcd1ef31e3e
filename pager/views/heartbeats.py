"""The heartbeats page: every source that must check in (HTTP check-ins, each
Alertmanager replica's Watchdog, the console's own worker queues and beat) with its
state; commanders add an HTTP heartbeat, whose token is shown once, in the answer to
that form and never again."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop
from django.views.decorators.http import require_http_methods

from console.bounds import parse_id
from console.errors import DomainError, page_message
from console.http import AuthedRequest
from console.web import console_view, denied
from pager.heartbeats import services
from pager.models import Heartbeat, HeartbeatKind, Team
from pager.permissions import MANAGE, VIEW
from pager.views import selectors
from pager.views.common import display_zone, shown_in

MAX_SECONDS = 10**9  # beyond any range the service allows; keeps int() sane


def beat_url(request: AuthedRequest, heartbeat: Heartbeat) -> str:
    try:
        path = reverse("pager-api:heartbeat-beat", args=[heartbeat.slug])
    except NoReverseMatch:  # the check-in API is not mounted
        return ""
    return request.build_absolute_uri(path)


INTERVAL = gettext_lazy("The interval")
GRACE = gettext_lazy("The grace period")


def _seconds(value: object, *, what: object, default: int) -> int:
    """A whole number of seconds from a form (the service checks its range)."""
    text = str(value or "").strip()
    if not text:
        return default
    number = parse_id(text)
    if number is None or number > MAX_SECONDS:
        raise DomainError(
            gettext_noop("%(what)s must be a whole number of seconds."),
            code="invalid",
            params={"what": what},
        )
    return number


def _create(request: AuthedRequest) -> tuple[Heartbeat, str]:
    post = request.POST
    team_id = parse_id(post.get("team")) if post.get("team") else None
    if team_id is not None and not Team.objects.filter(pk=team_id).exists():
        raise DomainError(gettext_noop("Choose a team from the list."), code="invalid")
    return services.heartbeat_create(
        name=str(post.get("name", "")).strip()[:200],
        team_id=team_id,
        interval_seconds=_seconds(post.get("interval"), what=INTERVAL, default=300),
        grace_seconds=_seconds(post.get("grace"), what=GRACE, default=60),
        actor=request.user,
    )


@require_http_methods(["GET", "POST"])
@console_view(VIEW)
def heartbeat_list(request: AuthedRequest):
    can_manage = request.user.has_perm(MANAGE)
    created = None
    form: dict[str, str] = {}
    if request.method == "POST":
        if not can_manage:
            raise PermissionDenied(_("Your role does not allow this."))
        try:
            heartbeat, token = _create(request)
        except (PermissionDenied, DomainError) as exc:
            response = denied(request, exc)
            if response is not None:
                return response
            messages.error(request, page_message(exc))
            form = {k: str(request.POST.get(k, "")) for k in ("name", "team", "interval", "grace")}
        else:
            created = {"heartbeat": heartbeat, "token": token, "url": beat_url(request, heartbeat)}
    heartbeats = selectors.heartbeats_all()
    zone = display_zone(request)
    context = {
        "heartbeats": heartbeats,
        "kinds": HeartbeatKind,
        "has_watchdog": any(h.kind == HeartbeatKind.WATCHDOG for h in heartbeats),
        "teams": list(Team.objects.order_by("name")),
        "can_manage": can_manage,
        "created": created,
        "form": form,
        "zone": zone,
        "now": timezone.now(),
    }
    status = 201 if created else (400 if form else 200)
    with shown_in(zone):
        response = render(request, "pager/heartbeats.html", context, status=status)
    if created:  # the token is in this answer only: no cache keeps it
        patch_cache_control(response, no_store=True)
    return response
