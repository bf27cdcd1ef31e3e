"""What the pager's pages share: the zone times are shown in, reading times and people
from forms, and the people a form may name."""

from __future__ import annotations

import re
import zoneinfo
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import date, datetime, tzinfo

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from console.bounds import DATE_MAX, DATE_MIN, parse_id
from console.errors import DomainError
from console.viewer import browser_zone, wants_utc
from pager.models import PagerProfile

UTC = zoneinfo.ZoneInfo("UTC")
# The form a datetime-local input sends (seconds optional).
_LOCAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?")
_WHY = {
    "utc": _("UTC, as you chose in the header"),
    "profile": _("your pager time zone"),
    "browser": _("your browser's time zone"),
    "schedule": _("each schedule's own time zone"),
}


@dataclass(frozen=True)
class Zone:
    """Where the page's times are shown: `zone` (None: each schedule's own) and why."""

    zone: tzinfo | None
    why: str

    @property
    def name(self) -> str:
        return str(self.zone) if self.zone is not None else ""

    @property
    def why_text(self) -> str:
        return str(_WHY[self.why])

    def for_schedule(self, schedule_zone: str) -> tzinfo:
        return self.zone if self.zone is not None else zone_named(schedule_zone)


def shown_in(zone: Zone) -> AbstractContextManager[object]:
    """Render inside this: the page's times in `zone` (none known: the console's)."""
    return timezone.override(zone.zone) if zone.zone is not None else nullcontext()


def zone_named(name: str) -> tzinfo:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return UTC


def profile_of(user: User) -> PagerProfile | None:
    return PagerProfile.objects.filter(user=user).first()


def display_zone(request: HttpRequest, profile: PagerProfile | None = None) -> Zone:
    """The console's own rule first (console/viewer.py): UTC when the viewer asked for it
    in the header, else the browser's zone. Else the zone saved on the pager page; else
    None: each schedule's own zone."""
    if wants_utc(request):
        return Zone(UTC, "utc")
    browser = browser_zone(request)
    if browser is not None:
        return Zone(browser, "browser")
    if profile is None and request.user.is_authenticated:
        profile = profile_of(request.user)
    if profile is not None:
        return Zone(zone_named(profile.time_zone), "profile")
    return Zone(None, "schedule")


def local_input(moment: datetime, zone: tzinfo) -> str:
    """A datetime-local input's value for `moment` in `zone`."""
    return moment.astimezone(zone).strftime("%Y-%m-%dT%H:%M")


def parse_local(value: object, zone: tzinfo, *, what: object) -> datetime:
    """A datetime-local value read in `zone`, or a DomainError naming the field."""
    text = str(value or "").strip()
    if not _LOCAL.fullmatch(text):
        raise DomainError(
            gettext_noop("Enter %(what)s as a date and time (YYYY-MM-DD HH:MM)."),
            code="invalid",
            params={"what": what},
        )
    try:
        naive = datetime.fromisoformat(text)
    except ValueError:
        raise DomainError(
            gettext_noop("%(what)s is not a real date and time."),
            code="invalid",
            params={"what": what},
        ) from None
    if not DATE_MIN <= naive.date() <= DATE_MAX:
        raise DomainError(
            gettext_noop("%(what)s is out of range."), code="invalid", params={"what": what}
        )
    return naive.replace(tzinfo=zone)


def parse_start(value: object, default: date) -> date:
    """The calendar's ?start=YYYY-MM-DD, or `default` when it is missing or no date."""
    text = str(value or "").strip()
    try:
        parsed = (
            date.fromisoformat(text) if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text) else None
        )
    except ValueError:
        parsed = None
    if parsed is None or not DATE_MIN <= parsed <= DATE_MAX:
        return default
    return parsed


def form_zone(request: HttpRequest, fallback: tzinfo) -> tzinfo:
    """The zone a form's times were typed in (the page sends the one it showed)."""
    name = str(request.POST.get("zone", ""))
    if not name or len(name) > 64:
        return fallback
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return fallback


def team_people(team_id: int) -> list[User]:
    """The team's active members: only they may go on call for its schedules."""
    return list(
        get_user_model()
        .objects.filter(is_active=True, pager_teams=team_id)
        .only("id", "username", "first_name", "last_name")
        .order_by("username")
    )


def user_named(user_id: object) -> User:
    pk = parse_id(user_id)
    user = get_user_model().objects.filter(pk=pk, is_active=True).first() if pk else None
    if user is None:
        raise DomainError(gettext_noop("Choose a person from the list."), code="invalid")
    return user
