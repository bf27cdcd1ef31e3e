"""Overdue action items: the one pipeline that tells people about them (beat, hourly).

Postmortems says which items are overdue (`postmortems.selectors.action_items_overdue`:
open or in progress, due before today); this module decides who hears of them, how
often, and delivers, three ways:

- the rules' targets (Slack, signed webhook, email): a delivery per target, item and due
  date, recorded, queued and retried like every other (moving the due date and missing
  it again is news again);
- the console's inbox (postmortems' Notifications page): the item's owner and whoever
  created it, once a day each, worded in their own language; the item keeps the day
  (`last_reminded_on`);
- the reminder webhook, when POSTMORTEM_REMINDER_WEBHOOK_URL is set: one Slack-compatible
  post (`{"text": ...}`, English, for a channel) listing the overdue items, on a run that
  reminded someone in the inbox (so once a day), through the outgoing guard.

No call is made inside a transaction: the rows are written first, the post comes last.
"""

from __future__ import annotations

import logging
from datetime import date
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_noop

from console.outgoing import OutgoingRefused, user_request
from notifications.events import Notice
from notifications.models import Event
from notifications.services.deliveries import deliveries_enqueue, deliveries_record
from postmortems.models import ActionItem
from postmortems.selectors import action_items_overdue
from postmortems.services import action_items_mark_reminded, notification_add

log = logging.getLogger(__name__)
# The inbox's words (translated for each reader) and, untranslated, each line of the post.
OVERDUE = gettext_noop("Overdue %(days)s d: %(title)s (incident #%(incident)s)")
INBOX_KIND = "overdue"
POST_LINES = 50  # the post names this many items; its first line counts them all


def action_items_overdue_notify(*, today: date | None = None) -> int:
    """Beat: tell the targets, the inbox and the reminder webhook about each open action
    item past its due date. Returns how many deliveries to targets were queued."""
    today = today or timezone.localdate()
    items = list(action_items_overdue(today=today))
    queued = _targets_notify(items, today)
    if _inbox_remind(items, today):  # someone new was told: the day's post
        _webhook_post(items, today)
    return queued


def _words(item: ActionItem, today: date) -> dict[str, object]:
    return {"days": (today - item.due_date).days, "title": item.title, "incident": item.incident_id}


def _targets_notify(items: list[ActionItem], today: date) -> int:
    """A delivery per matching rule's target, once per item and due date (the key)."""
    now = timezone.now()
    notices = [
        Notice(
            event=Event.ACTION_ITEM_OVERDUE,
            key=f"overdue:{item.pk}:{item.due_date.isoformat()}",
            incident_id=item.incident_id,
            occurred_at=now,
            details={
                "action_item": item.pk,
                "title": item.title,
                "due_date": item.due_date.isoformat(),
                "days_overdue": (today - item.due_date).days,
                "owner": item.owner.get_username() if item.owner else None,
                "priority": item.priority,
            },
        )
        for item in items
    ]
    return deliveries_enqueue(delivery_ids=deliveries_record(notices=notices))


def _recipients(item: ActionItem) -> list[User]:
    """The owner, and the creator when that is someone else."""
    people = [item.owner] if item.owner is not None else []
    if item.created_by_id != item.owner_id:
        people.append(item.created_by)
    return people


def _inbox_remind(items: list[ActionItem], today: date) -> int:
    """A notice per item and person per day. Returns how many were new."""
    new = 0
    for item in items:
        link = reverse("postmortems:items") + f"?item={item.pk}"
        for user in _recipients(item):
            new += notification_add(
                user=user,
                kind=INBOX_KIND,
                message=OVERDUE,
                link=link,
                key=f"overdue:{item.pk}:{today.isoformat()}",
                params=_words(item, today),
            )
    action_items_mark_reminded(item_ids=[item.pk for item in items], on=today)
    return new


def _webhook_post(items: list[ActionItem], today: date) -> None:
    url = settings.POSTMORTEM_REMINDER_WEBHOOK_URL
    if not url:
        return
    lines = [
        f"• {OVERDUE % _words(item, today)} — owner "
        f"{item.owner.username if item.owner else 'nobody'}"
        for item in items[:POST_LINES]
    ]
    text = f"{len(items)} overdue action item(s):\n" + "\n".join(lines)
    try:
        # Guarded and bounded like a notification target's URL (console/outgoing).
        user_request(
            "POST", url, json={"text": text}, deadline=settings.POSTMORTEM_WEBHOOK_TIMEOUT_SECONDS
        )
    except (requests.RequestException, OutgoingRefused) as exc:
        # The host only: a Slack-style webhook URL's path is itself a credential.
        log.warning("reminder webhook at %s failed: %s", urlsplit(url).hostname, exc)
