"""Timeline announcements: the registry through which higher apps hear of new timeline
entries. `timeline_appended` is sent with events=[TimelineEvent, ...] once the
transaction that appended them commits (never for a rollback). Higher apps connect from
their AppConfig.ready(), so incidents imports none of them (notifications turns entries
into deliveries, runbooks queues auto-triage); a receiver that raises is logged and the
write stands.

Every writer of the timeline uses it: save() and create() announce themselves (the
post_save receiver below), bulk writers (ingest, receipts, incident_events_record) call
timeline_announce.
"""

import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import Signal, receiver

from incidents.models import TimelineEvent

log = logging.getLogger(__name__)

timeline_appended = Signal()


def timeline_announce(events: Iterable[TimelineEvent]) -> None:
    """Send `timeline_appended` for `events` when the current transaction commits.
    save() and create() announce themselves (below); callers of bulk_create call this."""
    saved = [event for event in events if event.pk is not None]
    if saved:
        transaction.on_commit(lambda: _send(saved), robust=True)


def _send(events: list[TimelineEvent]) -> None:
    for receiver_, result in timeline_appended.send_robust(sender=TimelineEvent, events=events):
        if isinstance(result, Exception):
            log.error("timeline_appended: %r failed: %r", receiver_, result, exc_info=result)


@receiver(post_save, sender=TimelineEvent, dispatch_uid="incidents.timeline_announce")
def _announce_saved(
    sender: type[TimelineEvent], instance: TimelineEvent, created: bool, **kwargs: Any
) -> None:
    if created and not kwargs.get("raw"):  # raw: loaddata, which is not news
        timeline_announce([instance])
