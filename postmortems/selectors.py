"""Reads of postmortems and action items shared by pages, export and API."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from postmortems.models import (
    OPEN_ITEM_STATUSES,
    ActionItem,
    Notification,
    Postmortem,
    PostmortemEdit,
    PostmortemTimelineEntry,
    ReviewComment,
    Reviewer,
)


def postmortem_get(*, postmortem_id: int) -> Postmortem | None:
    """One postmortem with everything its page shows, in a constant number of queries."""
    return (
        Postmortem.objects.select_related(
            "incident", "incident__commander", "created_by", "published_by"
        )
        .prefetch_related(
            Prefetch(
                "entries", queryset=PostmortemTimelineEntry.objects.order_by("occurred_at", "id")
            ),
            "snapshots",
            Prefetch("reviewers", queryset=Reviewer.objects.select_related("user")),
            Prefetch("comments", queryset=ReviewComment.objects.select_related("author")),
            Prefetch("action_items", queryset=ActionItem.objects.select_related("owner")),
        )
        .filter(pk=postmortem_id)
        .first()
    )


def postmortem_for_incident(*, incident_id: int) -> Postmortem | None:
    return Postmortem.objects.filter(incident_id=incident_id).first()


def postmortem_list() -> QuerySet[Postmortem]:
    return Postmortem.objects.select_related("incident", "created_by").order_by("-created_at")


def postmortem_edits(*, postmortem_id: int) -> QuerySet[PostmortemEdit]:
    return PostmortemEdit.objects.filter(postmortem_id=postmortem_id).select_related("editor")


def action_item_list(
    *,
    status: str = "",
    owner: str = "",
    category: str = "",
    incident: int | None = None,
    overdue: bool = False,
    today=None,
) -> QuerySet[ActionItem]:
    items = ActionItem.objects.select_related("owner", "incident", "postmortem")
    if status == "open":  # what is still to do
        items = items.filter(status__in=OPEN_ITEM_STATUSES)
    elif status:
        items = items.filter(status=status)
    if owner:
        items = items.filter(owner__username=owner)
    if category:
        items = items.filter(category=category)
    if incident:
        items = items.filter(incident_id=incident)
    if overdue and today is not None:
        items = items.filter(status__in=OPEN_ITEM_STATUSES, due_date__lt=today)
    return items.order_by("due_date", "id")


def notifications_unread(*, user) -> QuerySet[Notification]:
    return Notification.objects.filter(user=user, read_at__isnull=True).order_by("-created_at")
