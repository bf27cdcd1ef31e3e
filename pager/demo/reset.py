"""The pager's share of `seed_demo --reset`: the escalations, pages and deliveries of
the demo incidents (the history, and anything the live engine recorded for them). It
runs before incidents removes the demo incidents (parts reset in reverse order); these
rows would cascade with them, but are removed here so the command can count them. The
configuration (teams, schedules, policies, contact methods, windows) stays: it is
set-up, not history, and people may have changed it since."""

from __future__ import annotations

from django.db.models import Q

from pager.models import Escalation, Page, PageDelivery


def pager_demo_reset() -> dict[str, int]:
    demo = Q(incident__is_demo=True) | Q(escalation__incident__is_demo=True)
    pages = Page.objects.filter(demo)
    counts = {"pager page deliveries": PageDelivery.objects.filter(page__in=pages).delete()[0]}
    counts["pager pages"] = pages.delete()[0]
    counts["pager escalations"] = Escalation.objects.filter(incident__is_demo=True).delete()[0]
    return counts
