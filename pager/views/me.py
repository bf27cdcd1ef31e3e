"""My on-call: my contact methods (in the order a page tries them), my shifts in the
next two weeks, my calendar feed, my time zone and the pages sent to me. Each form calls
one service and comes back here with a message."""

from __future__ import annotations

import zoneinfo
from datetime import datetime, timedelta
from functools import cache

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_GET, require_POST

from console.errors import DomainError
from console.http import AuthedRequest
from console.web import console_view, perform, refused
from pager.models import ContactKind, ContactMethod, Schedule
from pager.paging.methods import contact_test_words
from pager.paging.selectors import address_examples, contact_methods_of
from pager.paging.services import contacts
from pager.permissions import OWN
from pager.schedules import services as schedules
from pager.schedules.selectors import person_shifts
from pager.schedules.services import pager_profile_zone_set
from pager.schedules.shifts import Shift
from pager.views import selectors
from pager.views.common import display_zone, profile_of, shown_in

SHIFTS_AHEAD = timedelta(days=14)
EDGE = timedelta(days=8)
RECENT_PAGES = 10


@cache
def zone_names() -> list[str]:
    return sorted(zoneinfo.available_timezones())


def shown_address(method: ContactMethod, shown: str) -> str:
    """The masked address (scheme and host, pager/paging/methods.py), plus the last four
    characters of a push/SMS/chat address's path (a number's end, a chat id's end) to
    tell two methods of one kind apart."""
    if method.kind in (ContactKind.EMAIL, ContactKind.WEBHOOK):
        return shown
    path = method.address.split("?", 1)[0].split("#", 1)[0]
    path = path.split("://", 1)[-1].partition("/")[2].rstrip("/")
    return f"{shown} …{path[-4:]}" if len(path) >= 6 else shown


def _my_shifts(user: User, now: datetime) -> list[tuple[Schedule, Shift]]:
    """Shifts not over that begin in the next two weeks, with their real ends (read a
    week wider on both sides: a shift under way keeps its true start)."""
    around = person_shifts(user, now - EDGE, now + SHIFTS_AHEAD + EDGE)
    return [
        (schedule, shift)
        for schedule, shift in around
        if shift.ends_at > now and shift.starts_at < now + SHIFTS_AHEAD
    ]


def _back(anchor: str = "") -> str:
    return reverse("pager:me") + (f"#{anchor}" if anchor else "")


@require_GET
@console_view(OWN)
def me(request: AuthedRequest):
    user = request.user
    now = timezone.now()
    profile = profile_of(user)
    zone = display_zone(request, profile)
    feed_url = ""
    if profile is not None:
        try:
            feed_url = request.build_absolute_uri(
                reverse("pager:person-feed", args=[profile.feed_key])
            )
        except NoReverseMatch:  # the feeds are not mounted
            feed_url = ""
    methods = contact_methods_of(user_id=user.pk)
    examples = address_examples()
    context = {
        "zone": zone,
        "profile": profile,
        "methods": [(row.method, shown_address(row.method, row.shown)) for row in methods],
        "kinds": ContactKind.choices,
        "examples": [(kind, label, examples.get(kind, "")) for kind, label in ContactKind.choices],
        "shifts": _my_shifts(user, now),
        "feed_url": feed_url,
        "pages": list(selectors.pages_list(user_id=user.pk)[:RECENT_PAGES]),
        "zone_names": zone_names(),
        "zone_current": profile.time_zone if profile else (zone.name or "UTC"),
        "now": now,
    }
    with shown_in(zone):
        return render(request, "pager/me.html", context)


def _flag(request: AuthedRequest, name: str) -> bool:
    return request.POST.get(name) in ("on", "1", "true")


@require_POST
@console_view(OWN)
def method_add(request: AuthedRequest):
    post = request.POST
    return perform(
        request,
        lambda: contacts.contact_method_create(
            actor=request.user,
            user_id=request.user.pk,
            kind=str(post.get("kind", "")),
            address=str(post.get("address", "")),
            label=str(post.get("label", "")),
            enabled=True,
        ),
        done=_("Contact method added at the end of your list. Send a test to check it."),
        back=_back("methods"),
    )


@require_POST
@console_view(OWN)
def method_update(request: AuthedRequest, method_id: int):
    post = request.POST
    address = str(post.get("address", "")).strip()
    return perform(
        request,
        lambda: contacts.contact_method_update(
            actor=request.user,
            method_id=method_id,
            kind=str(post.get("kind", "")) or None,
            address=address or None,  # blank: keep the stored one
            label=str(post.get("label", "")),
            enabled=_flag(request, "enabled"),
        ),
        done=_("Contact method saved."),
        back=_back(f"method-{method_id}"),
    )


@require_POST
@console_view(OWN)
def method_delete(request: AuthedRequest, method_id: int):
    return perform(
        request,
        lambda: contacts.contact_method_delete(actor=request.user, method_id=method_id),
        done=_("Contact method removed."),
        back=_back("methods"),
    )


@require_POST
@console_view(OWN)
def method_move(request: AuthedRequest, method_id: int):
    order = [row.method.pk for row in contact_methods_of(user_id=request.user.pk)]
    if method_id not in order:
        return refused(
            request,
            DomainError(
                gettext_noop("Contact method #%(id)s does not exist."),
                code="not_found",
                params={"id": method_id},
            ),
            back=_back("methods"),
        )
    step = -1 if request.POST.get("direction") == "up" else 1
    position = min(max(order.index(method_id) + 1 + step, 1), len(order))
    return perform(
        request,
        lambda: contacts.contact_method_move(
            actor=request.user, method_id=method_id, position=position
        ),
        done=_("Order saved: a page tries your methods from the top."),
        back=_back(f"method-{method_id}"),
    )


@require_POST
@console_view(OWN)
def method_test(request: AuthedRequest, method_id: int):
    # Sends now (up to PAGER_TIMEOUT_SECONDS), outside any transaction.
    try:
        result = contacts.contact_method_test(method_id=method_id, actor=request.user)
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=_back("methods"))
    # Stored in English (the column has no parts): shown in the viewer's language.
    shown = contact_test_words(result) or result
    if result.startswith("Failed"):
        messages.error(
            request,
            _("The test did not go out: %(result)s Fix the address, then test again.")
            % {"result": shown},
        )
    else:
        messages.success(
            request, _("Test sent. Check that it arrived: %(result)s") % {"result": shown}
        )
    return redirect(_back(f"method-{method_id}"))


@require_POST
@console_view(OWN)
def feed_rotate(request: AuthedRequest):
    return perform(
        request,
        lambda: schedules.feed_key_rotate(user=request.user, actor=request.user),
        done=_(
            "Your calendar feed has a new address: subscribe to it again; the old one "
            "no longer works."
        ),
        back=_back("feed"),
    )


@require_POST
@console_view(OWN)
def zone_set(request: AuthedRequest):
    return perform(
        request,
        lambda: pager_profile_zone_set(
            user=request.user,
            time_zone=str(request.POST.get("time_zone", "")),
            actor=request.user,
        ),
        done=_("Time zone saved."),
        back=_back("zone"),
    )
