"""A person's pager profile: the time zone their pager pages and feed show times in."""

from __future__ import annotations

import zoneinfo

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.permissions import require
from pager import permissions
from pager.models import PagerProfile


@transaction.atomic
def pager_profile_zone_set(*, user: User, time_zone: str, actor: User) -> PagerProfile:
    """The zone `user`'s pager pages and feed show times in (the actor's own: OWN)."""
    require(
        actor,
        permissions.OWN if user.pk == getattr(actor, "pk", None) else permissions.MANAGE,
        gettext_lazy("change this person's time zone"),
    )
    name = (time_zone or "").strip()
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise DomainError(
            gettext_noop(
                "Unknown time zone %(name)s: use a name from the IANA list, e.g. Europe/Berlin."
            ),
            code="invalid",
            params={"name": repr(name[:64])},
        ) from None
    if len(name) > 64:
        raise DomainError(gettext_noop("That time zone name is too long."), code="invalid")
    profile, _created = PagerProfile.objects.select_for_update().get_or_create(user=user)
    profile.time_zone = name
    profile.save(update_fields=["time_zone"])
    return profile
