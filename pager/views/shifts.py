"""The team page's forms: take a shift, overrides, swap requests, maintenance windows.
Each calls one service and goes back to the team page with a message; a refused form
goes back with what was typed, so nothing is typed twice."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop
from django.views.decorators.http import require_POST

from console.bounds import parse_id
from console.errors import DomainError
from console.http import AuthedRequest
from console.web import console_view, perform, refused
from pager.maintenance import services as maintenance
from pager.models import Team
from pager.permissions import MANAGE, OWN
from pager.schedules import services as schedules
from pager.views.common import display_zone, form_zone, parse_local, user_named, zone_named

FROM = gettext_lazy("the start")
UNTIL = gettext_lazy("the end")


def _team_url(slug: str, anchor: str = "", **query: object) -> str:
    url = reverse("pager:team", args=[slug])
    kept = {k: v for k, v in query.items() if v not in (None, "")}
    return f"{url}{'?' + urlencode(kept) if kept else ''}{'#' + anchor if anchor else ''}"


def _typed(post) -> dict[str, object]:
    """The times typed into a form, to fill it in again after a refusal."""
    return {"from": str(post.get("from", ""))[:16], "until": str(post.get("until", ""))[:16]}


def _times(request: AuthedRequest, team: Team):
    """The form's from/until, read in the zone the page showed them in."""
    schedules_ = list(team.schedules.all())
    fallback = display_zone(request).zone or (
        zone_named(schedules_[0].time_zone) if schedules_ else zone_named("UTC")
    )
    zone = form_zone(request, fallback)
    starts_at = parse_local(request.POST.get("from"), zone, what=FROM)
    ends_at = parse_local(request.POST.get("until"), zone, what=UNTIL)
    return starts_at, ends_at


def _schedule_id(request: AuthedRequest, team: Team) -> int:
    schedule_id = parse_id(request.POST.get("schedule"))
    if schedule_id is None or not team.schedules.filter(pk=schedule_id).exists():
        raise DomainError(gettext_noop("Choose one of this team's schedules."), code="invalid")
    return schedule_id


def _run(
    request: AuthedRequest, call: Callable[[], object], *, done: str, back: str, retry: str
) -> HttpResponse:
    """perform(), but a refusal goes back to `retry` (the form with what was typed)."""
    try:
        call()
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=retry)
    messages.success(request, done)
    return redirect(back)


@require_POST
@console_view(OWN)
def shift_take(request: AuthedRequest, slug: str):
    team = get_object_or_404(Team, slug=slug)
    post = request.POST
    retry = _team_url(slug, "take-form", take=post.get("schedule"), **_typed(post))

    def call() -> None:
        starts_at, ends_at = _times(request, team)
        schedules.shift_take(
            schedule_id=_schedule_id(request, team),
            starts_at=starts_at,
            ends_at=ends_at,
            actor=request.user,
            reason=str(post.get("reason", ""))[:500],
        )

    return _run(
        request,
        call,
        done=_("You are on call for that time; the calendar shows it as taken."),
        back=_team_url(slug, "calendar"),
        retry=retry,
    )


@require_POST
@console_view(MANAGE)
def override_create(request: AuthedRequest, slug: str):
    team = get_object_or_404(Team, slug=slug)
    retry = _team_url(slug, "override-form")

    def call() -> None:
        starts_at, ends_at = _times(request, team)
        schedules.override_create(
            schedule_id=_schedule_id(request, team),
            user_id=user_named(request.POST.get("user")).pk,
            starts_at=starts_at,
            ends_at=ends_at,
            actor=request.user,
            reason=str(request.POST.get("reason", ""))[:500],
        )

    return _run(
        request,
        call,
        done=_("Override added; the calendar shows it."),
        back=_team_url(slug, "overrides"),
        retry=retry,
    )


@require_POST
@console_view(OWN)  # the service: MANAGE, or OWN for a person's own taken shift
def override_cancel(request: AuthedRequest, slug: str, override_id: int):
    return perform(
        request,
        lambda: schedules.override_cancel(override_id=override_id, actor=request.user),
        done=_("Override cancelled: the schedule's own rotation applies again."),
        back=_team_url(slug, "overrides"),
    )


@require_POST
@console_view(OWN)
def swap_request(request: AuthedRequest, slug: str):
    team = get_object_or_404(Team, slug=slug)
    post = request.POST
    retry = _team_url(slug, "swap-form", swap=post.get("schedule"), **_typed(post))

    def call() -> None:
        starts_at, ends_at = _times(request, team)
        schedules.swap_request(
            schedule_id=_schedule_id(request, team),
            starts_at=starts_at,
            ends_at=ends_at,
            actor=request.user,
            note=str(post.get("note", ""))[:500],
        )

    return _run(
        request,
        call,
        done=_("Swap requested: your teammates see it on this page and can accept it."),
        back=_team_url(slug, "swaps"),
        retry=retry,
    )


@require_POST
@console_view(OWN)
def swap_accept(request: AuthedRequest, slug: str, swap_id: int):
    return perform(
        request,
        lambda: schedules.swap_accept(swap_id=swap_id, actor=request.user),
        done=_("Swap accepted: you are on call for that time."),
        back=_team_url(slug, "swaps"),
    )


@require_POST
@console_view(OWN)
def swap_cancel(request: AuthedRequest, slug: str, swap_id: int):
    return perform(
        request,
        lambda: schedules.swap_cancel(swap_id=swap_id, actor=request.user),
        done=_("Swap request cancelled."),
        back=_team_url(slug, "swaps"),
    )


@require_POST
@console_view(MANAGE)
def window_create(request: AuthedRequest, slug: str):
    team = get_object_or_404(Team, slug=slug)
    post = request.POST

    def call() -> None:
        starts_at, ends_at = _times(request, team)
        maintenance.window_create(
            name=str(post.get("name", "")).strip()[:200],
            team_id=team.pk,
            matchers=None,  # everything the team owns
            starts_at=starts_at,
            ends_at=ends_at,
            recurrence=str(post.get("recurrence", "")).strip()[:500],
            time_zone=str(form_zone(request, zone_named("UTC"))),
            reason=str(post.get("reason", "")).strip()[:500],
            actor=request.user,
        )

    return _run(
        request,
        call,
        done=_("Maintenance window added: incidents this team owns open in it without paging."),
        back=_team_url(slug, "windows"),
        retry=_team_url(slug, "window-form"),
    )


@require_POST
@console_view(MANAGE)
def window_cancel(request: AuthedRequest, slug: str, window_id: int):
    return perform(
        request,
        lambda: maintenance.window_cancel(window_id=window_id, actor=request.user),
        done=_("Maintenance window cancelled: incidents page again."),
        back=_team_url(slug, "windows"),
    )


@require_POST
@console_view(MANAGE)
def schedule_feed_rotate(request: AuthedRequest, slug: str, schedule_id: int):
    return perform(
        request,
        lambda: schedules.feed_key_rotate(schedule_id=schedule_id, actor=request.user),
        done=_(
            "The schedule's calendar feed has a new address: the old one no longer works; "
            "give the new one to whoever subscribed."
        ),
        back=_team_url(slug, "feeds"),
    )
