"""A maintenance summary posted to the team's channel (its notifications Target: Slack,
signed webhook or email), through the notifications transports: the same guard,
deadline and message shape as every notification. Best effort, once, and never inside
a transaction: a channel that fails is logged; the summary and the timeline keep the
record."""

from __future__ import annotations

import logging
from typing import Any

from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext, ngettext

from incidents.models import Incident, IncidentStatus
from notifications.links import console_url
from notifications.messages import BODY_VERSION
from notifications.transports import DeliveryError, deliver
from pager.models import MaintenanceSummary, MaintenanceWindow

log = logging.getLogger(__name__)
EVENT = "maintenance_summary"  # the webhook's X-Console-Event


def summary_body(
    window: MaintenanceWindow, summary: MaintenanceSummary, *, language: str
) -> dict[str, Any]:
    """The message in the notifications' body shape, worded in `language`."""
    ids = list(summary.incident_ids or [])
    still = list(
        Incident.objects.filter(pk__in=ids)
        .exclude(status=IncidentStatus.RESOLVED)
        .values_list("pk", flat=True)
    )
    with translation.override(language):
        if ids:
            line = ngettext(
                "Maintenance window %(name)s ended: %(n)s incident opened inside it "
                "(%(open)s still open); nobody was paged.",
                "Maintenance window %(name)s ended: %(n)s incidents opened inside it "
                "(%(open)s still open); nobody was paged.",
                len(ids),
            ) % {"name": window.name, "n": len(ids), "open": len(still)}
        else:
            line = gettext("Maintenance window %(name)s ended: no incident opened inside it.") % {
                "name": window.name
            }
        label = gettext("Maintenance window ended")
    return {
        "version": BODY_VERSION,
        "language": language,
        "event": EVENT,
        "event_label": label,
        "id": f"maintenance:{summary.pk}",
        "occurred_at": (summary.written_at or timezone.now()).isoformat(),
        "summary": line,
        "text": summary.text,
        "url": console_url() + reverse("incidents:list"),
        "actor": None,
        "incident": None,
        "details": {
            "window": window.pk,
            "name": window.name,
            "occurrence_start": summary.occurrence_start.isoformat(),
            "occurrence_end": summary.occurrence_end.isoformat(),
            "incident_ids": ids,
            "still_open_ids": sorted(still),
        },
    }


def summary_post(*, window: MaintenanceWindow, summary: MaintenanceSummary) -> bool:
    """Post to the window's team's channel; True when it was delivered."""
    team = window.team
    target = team.channel if team is not None else None
    if target is None or not target.enabled:
        return False
    try:
        deliver(target, summary_body(window, summary, language=target.language),
                delivery_id=summary.pk)  # fmt: skip
    except DeliveryError as exc:
        log.warning("maintenance summary %s to %s: %s", summary.pk, target.name, exc)
        return False
    except Exception:  # best effort: the summary is written whatever the channel does
        log.exception("maintenance summary %s to %s failed", summary.pk, target.name)
        return False
    return True
