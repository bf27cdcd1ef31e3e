"""What chat hears from the incident timeline: incidents' `timeline_appended`, sent once
the writer's transaction commits. Recording posts costs a few queries per incident and
makes no call to the chat (the worker sends them), so the write that caused it is never
slowed by a chat outage; a failure here is logged by the signal and the write stands."""

from __future__ import annotations

from chatops.threads.services import timeline_events_post
from incidents.models import TimelineEvent


def timeline_appended_receive(
    sender: object, events: list[TimelineEvent], **kwargs: object
) -> None:
    timeline_events_post(events=list(events))
