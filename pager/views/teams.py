"""The teams page (who is on call now and next, per team) and a team's page: on call, the
two-week calendar, overrides, taking a shift, swaps, the escalation policy in words,
heartbeats, maintenance windows and the schedules' iCal feeds."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from console.bounds import parse_id
from console.http import AuthedRequest
from console.web import console_view
from pager.permissions import MANAGE, OWN, VIEW
from pager.schedules.selectors import oncall_now_and_next_many, shifts_between_many
from pager.schedules.shifts import Shift
from pager.views import selectors
from pager.views.calendar import DAYS, Link, calendar_build, week_start, window
from pager.views.common import (
    UTC,
    display_zone,
    local_input,
    parse_start,
    team_people,
    zone_named,
)
from pager.views.words import policy_after_text, step_text

EDGE = timedelta(days=8)


@require_GET
@console_view(VIEW)
def team_list(request: AuthedRequest):
    now = timezone.now()
    zone = display_zone(request)
    default_policy = selectors.policy_default()
    rows = [
        (
            row,
            [
                (s.schedule, s.oncall, zone.for_schedule(s.schedule.time_zone))
                for s in row.schedules
            ],
        )
        for row in selectors.teams_overview(at=now)
    ]
    context = {
        "rows": rows,
        "zone": zone,
        "now": now,
        "default_policy": default_policy,
        "can_manage": request.user.has_perm(MANAGE),
    }
    return render(request, "pager/teams.html", context)


def _feed_url(request: AuthedRequest, schedule) -> str:
    try:
        path = reverse("pager:schedule-feed", args=[schedule.feed_key])
    except NoReverseMatch:  # the feeds are not mounted: no link
        return ""
    return request.build_absolute_uri(path)


def _prefill(request: AuthedRequest, key: str, schedules, zone) -> dict | None:
    """?take=<schedule id>&from=&until= (a clicked shift block) for the take/swap forms."""
    schedule_id = parse_id(request.GET.get(key))
    if schedule_id is None or schedule_id not in {s.pk for s in schedules}:
        return None
    return {
        "schedule_id": schedule_id,
        "from": str(request.GET.get("from", ""))[:16],
        "until": str(request.GET.get("until", ""))[:16],
    }


def _block_link(*, start, user_id: int, zone) -> Link:
    """A shift block's link: take someone's shift, or ask to swap your own."""

    def link(schedule, shift: Shift) -> tuple[str, str]:
        key = "swap" if shift.user_id == user_id else "take"
        query = {
            "start": start.isoformat(),
            key: schedule.pk,
            "from": local_input(shift.starts_at, zone),
            "until": local_input(shift.ends_at, zone),
        }
        return key, f"?{urlencode(query)}#{key}-form"

    return link


@require_GET
@console_view(VIEW)
def team_detail(request: AuthedRequest, slug: str):
    now = timezone.now()
    team = selectors.team_get(slug)
    schedules = selectors.team_schedules(team)
    zone = display_zone(request)
    # One zone for the calendar's columns: the viewer's, else the first schedule's.
    cal_zone = zone.zone or (zone_named(schedules[0].time_zone) if schedules else UTC)
    today = now.astimezone(cal_zone).date()
    start = parse_start(request.GET.get("start"), week_start(today))
    begin, end = window(start, cal_zone)
    # Read a week either side: a shift crossing the window's edge keeps its real ends.
    begin, end = begin - EDGE, end + EDGE
    can_own, can_manage = request.user.has_perm(OWN), request.user.has_perm(MANAGE)
    link = _block_link(start=start, user_id=request.user.pk, zone=cal_zone) if can_own else None
    shifts = shifts_between_many(schedules, begin, end)  # every schedule in one read
    calendar = calendar_build(start, cal_zone, [(s, shifts[s.pk]) for s in schedules], link=link)
    oncall = oncall_now_and_next_many(schedules, now)
    policy = team.escalation_policy or selectors.policy_default()
    members = team_people(team.pk) if can_manage else []
    context = {
        "team": team,
        "zone": zone,
        "cal_zone": cal_zone,
        "now": now,
        "oncall": [(s, oncall[s.pk], zone.for_schedule(s.time_zone)) for s in schedules],
        "calendar": calendar,
        "today": today,
        "prev_start": (start - timedelta(days=7)).isoformat(),
        "next_start": (start + timedelta(days=7)).isoformat(),
        "this_week": week_start(today).isoformat(),
        "end_day": start + timedelta(days=DAYS - 1),
        "schedules": schedules,
        "overrides": selectors.team_overrides(team, at=now),
        "swaps": selectors.team_swaps(team, at=now),
        "take": _prefill(request, "take", schedules, cal_zone),
        "swap": _prefill(request, "swap", schedules, cal_zone),
        "policy": policy,
        "policy_is_default": team.escalation_policy is None and policy is not None,
        "steps": [(step, step_text(step, policy)) for step in policy.steps.all()] if policy else [],
        "policy_after": policy_after_text(policy) if policy else [],
        "heartbeats": selectors.team_heartbeats(team),
        "windows": selectors.windows_upcoming(at=now, team=team),
        "feeds": [(s, _feed_url(request, s)) for s in schedules] if can_manage else [],
        "members": members,
        "can_own": can_own,
        "can_manage": can_manage,
        "default_from": local_input(now, cal_zone),
        "default_until": local_input(now + timedelta(hours=8), cal_zone),
    }
    # Every time on the page but the on-call lines (each in its own zone) in the calendar's.
    with timezone.override(cal_zone):
        return render(request, "pager/team.html", context)
