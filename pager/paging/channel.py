"""A page to a team's channel: a notifications target (Slack, signed webhook or email),
posted through notifications' own transports so a channel is configured once and
behaves alike for notifications and pages. A channel cannot acknowledge (nobody is the
actor), so its message links to the incident instead of a one-tap link."""

from __future__ import annotations

from django.utils import timezone

from notifications.models import Target
from notifications.transports import DeliveryError, deliver
from pager.paging.messages import PageText
from pager.paging.send import SendError

EVENT = "page"


def channel_body(text: PageText, *, page_id: int) -> dict[str, object]:
    """The body notifications' transports read (the webhook gets it whole, signed)."""
    data = text.data
    incident = dict(data["incident"])
    incident.setdefault("commander", None)
    return {
        "version": data["version"],
        "language": data["language"],
        "event": EVENT,
        "event_label": "Page",
        "id": f"page:{page_id}",
        "occurred_at": timezone.now().isoformat(),
        "summary": text.title,
        "text": text.text,
        "url": incident["url"],
        "actor": None,
        "incident": incident,
        "details": {"page": data["page"]},
    }


def channel_send(*, target_id: int, text: PageText, page_id: int, delivery_id: int) -> None:
    """Post the page to the target; SendError (transient when a retry can help)."""
    target = Target.objects.filter(pk=target_id).first()
    if target is None or not target.enabled:
        raise SendError("The team's channel was removed or disabled.", transient=False)
    try:
        deliver(target, channel_body(text, page_id=page_id), delivery_id=delivery_id)
    except DeliveryError as exc:
        raise SendError(f"{target.name}: {exc.message}", transient=exc.retry) from None
