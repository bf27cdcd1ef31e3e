"""How related incidents hear of what happened, without touching the ingest: an opening
(incidents.timeline_signal, once the ingest's transaction committed) links the new
incident; an incident marked a drill or demo afterwards (the drill worker claims its
incident a few seconds after it opened) is unlinked from real ones. Connected from
IncidentsConfig.ready(); a failure is logged and the opening stands."""

import logging
from typing import Any

from django.db import transaction

from incidents.models import Incident, TimelineEvent, TimelineEventType
from incidents.related.services import incident_related_link, incident_related_split_kinds

log = logging.getLogger(__name__)

_KIND_FLAGS = {"is_drill", "is_demo"}


def on_timeline_appended(sender: Any, events: list[TimelineEvent], **kwargs: Any) -> None:
    opened = sorted({e.incident_id for e in events if _opens(e)})
    for incident_id in opened:  # in id order: the first opened is linked to first
        try:
            incident_related_link(incident_id=incident_id)
        except Exception:
            log.exception("related incidents: linking #%s failed", incident_id)


def _opens(event: TimelineEvent) -> bool:
    """An opening, or a resolved incident firing again (reopened): both are news about
    the target that the incidents open around it may share."""
    if event.kind == TimelineEventType.INCIDENT_OPENED:
        return True
    payload = event.payload or {}
    return (
        event.kind == TimelineEventType.STATUS_CHANGED
        and payload.get("from") == "resolved"
        and payload.get("to") == "triggered"
    )


def on_incident_saved(
    sender: type[Incident], instance: Incident, created: bool, **kwargs: Any
) -> None:
    fields = kwargs.get("update_fields") or ()
    if created or kwargs.get("raw") or not _KIND_FLAGS & set(fields):
        return
    incident_id = instance.pk
    transaction.on_commit(
        lambda: incident_related_split_kinds(incident_id=incident_id), robust=True
    )
