"""Reads of postmortems and action items shared by pages, export and API."""

from __future__ import annotations

from datetime import date

from django.contrib.auth.models import User
from django.db.models import Prefetch, Q, QuerySet
from django.utils.translation import gettext_noop

from console.errors import DomainError, page_message
from postmortems.models import (
    OPEN_ITEM_STATUSES,
    TEXT_SECTIONS,
    ActionItem,
    Notification,
    Postmortem,
    PostmortemEdit,
    PostmortemTimelineEntry,
    ReviewComment,
    Reviewer,
    ReviewerState,
)

# Edit-history rows that are someone writing content (not status changes or refreshes).
AUTHORED = Q(field__in=("title", *TEXT_SECTIONS, "action_item")) | Q(field__startswith="timeline:")


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


# --- review: who may approve, and whether it may be published ----------------------------
# Self-review rule: a reviewer whose edits are all the human edits of the content cannot
# approve it. Someone else must have written part of it, or another named reviewer approves
# (the author's own approval is then not waited for). A draft nobody has edited was written
# by the console from the incident record, so any named reviewer may approve it.
def postmortem_sole_author_id(pm: Postmortem) -> int | None:
    """The one person who made every human edit of the content, if there is exactly one."""
    editors = list(
        PostmortemEdit.objects.filter(AUTHORED, postmortem=pm, editor__isnull=False)
        .order_by("editor_id")
        .values_list("editor_id", flat=True)
        .distinct()[:2]
    )
    return editors[0] if len(editors) == 1 else None


def postmortem_publish_blocker(
    pm: Postmortem, reviewers: list[Reviewer], author_id: int | None
) -> str:
    """Why the postmortem cannot be published now, in the page's language ("" if it can)."""
    refusal = postmortem_publish_refusal(pm, reviewers, author_id)
    return page_message(refusal) if refusal is not None else ""


def postmortem_publish_refusal(
    pm: Postmortem, reviewers: list[Reviewer], author_id: int | None
) -> DomainError | None:
    """Why the postmortem cannot be published now (None if it can): every named reviewer
    approved the current revision, except its only author, and someone other than the
    author did. The page shows the same answer the service enforces."""
    current = [
        r
        for r in reviewers
        if r.state == ReviewerState.APPROVED and r.approved_revision == pm.revision
    ]
    waiting = sorted(
        r.user.get_username() for r in reviewers if r not in current and r.user_id != author_id
    )
    if waiting:
        return DomainError(
            gettext_noop("Waiting for approval of revision %(revision)s from %(names)s."),
            params={"revision": pm.revision, "names": ", ".join(waiting)},
        )
    if not any(r.user_id != author_id for r in current):
        author = next((r.user.get_username() for r in reviewers if r.user_id == author_id), "")
        if not author:
            return DomainError(gettext_noop("Name a reviewer first."))
        return DomainError(
            gettext_noop(
                "%(author)s wrote all of it, so their approval alone cannot publish it: "
                "request review from someone else."
            ),
            params={"author": author},
        )
    return None


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
    today: date | None = None,
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
        items = items.filter(_overdue(today))
    return items.order_by("due_date", "id")


def _overdue(today: date) -> Q:
    """Still to do and past its due date (due today is not late yet)."""
    return Q(status__in=OPEN_ITEM_STATUSES, due_date__lt=today)


def action_items_overdue(*, today: date) -> QuerySet[ActionItem]:
    """The items overdue on `today`, the oldest due first, with the people a reminder goes
    to (owner, creator): what notifications/services/overdue.py tells people about."""
    return (
        ActionItem.objects.filter(_overdue(today))
        .select_related("owner", "created_by")
        .order_by("due_date", "id")
    )


def notifications_unread(*, user: User) -> QuerySet[Notification]:
    return Notification.objects.filter(user=user, read_at__isnull=True).order_by("-created_at")


def notifications_read(*, user: User, limit: int) -> list[Notification]:
    """The newest `limit` notices `user` has read, the last read first."""
    rows = Notification.objects.filter(user=user, read_at__isnull=False)
    return list(rows.order_by("-read_at", "-id")[:limit])
