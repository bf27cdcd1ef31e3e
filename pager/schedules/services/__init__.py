"""Changes to who is on call: overrides, taking a shift, swaps, the imported calendar
and the feed keys. Each is checked (role, time, team) and recorded in the audit log
(console.audit): schedules are not incidents, so they have no timeline.

Rules a person meets:
- a change must end after it starts, last at most 31 days, and not be over already;
  a take or a swap starts now at the earliest (the past stays as it was);
- whoever goes on call must be a member of the schedule's team;
- OWN (responders): take a shift for yourself, ask for a swap of time you are on call
  for, accept someone else's swap, end your own take; MANAGE (commanders): overrides for
  anyone, cancel any override or swap, the calendar and the schedule's feed key;
- cancelling an override that has begun ends it now (what happened stays on record).

Modules: checks.py (what every change checks and records), oncall.py (overrides, takes,
swaps), calendars.py (the imported calendar, feed keys).
"""

from pager.schedules.services.calendars import (
    feed_key_rotate,
    pager_profile_ensure,
    schedule_ical_refresh,
    schedule_ical_upload,
    schedules_ical_refresh_due,
)
from pager.schedules.services.checks import AUDIT_KIND, AUDIT_METHOD, MAX_LENGTH
from pager.schedules.services.oncall import (
    override_cancel,
    override_create,
    shift_take,
    swap_accept,
    swap_cancel,
    swap_request,
)
from pager.schedules.services.profile import pager_profile_zone_set

__all__ = [
    "AUDIT_KIND",
    "AUDIT_METHOD",
    "MAX_LENGTH",
    "feed_key_rotate",
    "override_cancel",
    "override_create",
    "pager_profile_ensure",
    "pager_profile_zone_set",
    "schedule_ical_refresh",
    "schedule_ical_upload",
    "schedules_ical_refresh_due",
    "shift_take",
    "swap_accept",
    "swap_cancel",
    "swap_request",
]
