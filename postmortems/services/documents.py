"""Editing and the review workflow: draft -> in review (named reviewers, comments) ->
published. A published postmortem is read-only except for admins; every edit of a field or
a timeline line goes into the append-only edit history.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from console.errors import DomainError
from postmortems.models import (
    TEXT_SECTIONS,
    DraftState,
    Notification,
    Postmortem,
    PostmortemEdit,
    PostmortemStatus,
    PostmortemTimelineEntry,
    ReviewComment,
    Reviewer,
    ReviewerState,
    TimelineSource,
)
from postmortems.services.timeline import postmortem_event

DRAFT = "postmortems.draft_postmortem"
REVIEW = "postmortems.review_postmortem"
PUBLISH = "postmortems.publish_postmortem"
ADMIN_EDIT = "postmortems.change_postmortem"
TEXT_MAX = 50_000
TITLE_MAX = 300
S = PostmortemStatus


def _require(actor, perm: str, what: str) -> None:
    if actor is None or not actor.is_authenticated or not actor.has_perm(perm):
        raise PermissionDenied(f"Your role does not allow you to {what}.")


def _locked(postmortem_id: int) -> Postmortem:
    pm = Postmortem.objects.select_for_update().filter(pk=postmortem_id).first()
    if pm is None:
        raise DomainError(f"Postmortem #{postmortem_id} does not exist.", code="not_found")
    return pm


def _editable(pm: Postmortem, actor) -> None:
    _require(actor, DRAFT, "edit postmortems")
    if pm.draft_state != DraftState.READY:
        raise DomainError("The postmortem is still being drafted; try again in a moment.")
    if pm.status == S.PUBLISHED and not actor.has_perm(ADMIN_EDIT):
        raise PermissionDenied("This postmortem is published; only an admin can change it.")


def _text(value, *, what: str, limit: int) -> str:
    value = "" if value is None else str(value)
    if len(value) > limit:
        raise DomainError(f"The {what} is longer than {limit} characters.", code="invalid")
    return value.replace("\r\n", "\n")


def _history(pm, actor, field: str, old: str, new: str) -> None:
    PostmortemEdit.objects.create(
        postmortem=pm, editor=actor, at=timezone.now(), field=field, old=old, new=new
    )


@transaction.atomic
def postmortem_update(*, postmortem_id: int, actor, version: int, changes: dict) -> Postmortem:
    """Change the title and text sections. `version` is the one the editor loaded: if
    someone saved in between, the save is refused (nothing is lost: the form keeps it)."""
    pm = _locked(postmortem_id)
    _editable(pm, actor)
    if int(version) != pm.version:
        raise DomainError(
            "Someone else saved this postmortem while you were editing. Copy your text, "
            "reload, and apply it again.",
            code="conflict",
        )
    allowed = {"title", *TEXT_SECTIONS}
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise DomainError(f"{unknown[0]} is not a postmortem field.", code="invalid")
    changed = False
    for field, value in changes.items():
        limit = TITLE_MAX if field == "title" else TEXT_MAX
        new = _text(value, what=field.replace("_", " "), limit=limit)
        if field == "title" and not new.strip():
            raise DomainError("The title is empty.", code="invalid")
        old = getattr(pm, field)
        if new != old:
            setattr(pm, field, new)
            _history(pm, actor, field, old, new)
            changed = True
    if changed:
        pm.version += 1
        pm.save()
    return pm


@transaction.atomic
def timeline_entry_update(
    *, entry_id: int, actor, text: str | None = None, included: bool | None = None
) -> PostmortemTimelineEntry:
    """Reword a timeline line or leave it out; its time never changes."""
    entry = PostmortemTimelineEntry.objects.select_for_update().filter(pk=entry_id).first()
    if entry is None:
        raise DomainError(f"Timeline entry #{entry_id} does not exist.", code="not_found")
    pm = _locked(entry.postmortem_id)
    _editable(pm, actor)
    if text is not None:
        new = _text(text, what="timeline text", limit=2000).strip()
        if not new:
            raise DomainError("A timeline line needs text; leave it out instead.", code="invalid")
        if new != entry.text:
            _history(pm, actor, f"timeline:{entry.pk}", entry.text, new)
            entry.text = new
    if included is not None and bool(included) != entry.included:
        _history(pm, actor, f"timeline:{entry.pk}:included", str(entry.included), str(included))
        entry.included = bool(included)
    entry.save()
    return entry


@transaction.atomic
def timeline_entry_add(*, postmortem_id: int, actor, occurred_at, text: str):
    pm = _locked(postmortem_id)
    _editable(pm, actor)
    text = _text(text, what="timeline text", limit=2000).strip()
    if not text or occurred_at is None:
        raise DomainError("A timeline line needs a time and text.", code="invalid")
    entry = PostmortemTimelineEntry.objects.create(
        postmortem=pm,
        occurred_at=occurred_at,
        source=TimelineSource.MANUAL,
        kind="manual",
        original_text=text,
        text=text,
    )
    _history(pm, actor, f"timeline:{entry.pk}", "", text)
    return entry


def _notify(user, kind: str, message: str, link: str, key: str) -> None:
    Notification.objects.get_or_create(
        user=user,
        dedupe_key=key,
        defaults={
            "kind": kind,
            "message": message[:500],
            "link": link,
            "created_at": timezone.now(),
        },
    )


@transaction.atomic
def postmortem_request_review(*, postmortem_id: int, actor, reviewers: list[str]) -> Postmortem:
    """Name reviewers (usernames) and move the draft to review; they get a notification."""
    pm = _locked(postmortem_id)
    _editable(pm, actor)
    if pm.status == S.PUBLISHED:
        raise DomainError("The postmortem is already published.", code="invalid_state")
    names = sorted({r.strip() for r in reviewers if r and r.strip()})
    if not names:
        raise DomainError("Name at least one reviewer.", code="invalid")
    users = list(get_user_model().objects.filter(username__in=names, is_active=True))
    missing = sorted(set(names) - {u.username for u in users})
    if missing:
        raise DomainError(f"No active user named {', '.join(missing)}.", code="invalid")
    for user in users:
        if not user.has_perm(REVIEW):
            raise DomainError(
                f"{user.username} cannot review postmortems (needs the commander role)."
            )
        Reviewer.objects.update_or_create(
            postmortem=pm,
            user=user,
            defaults={"state": ReviewerState.REQUESTED, "decided_at": None},
        )
        _notify(
            user,
            "review",
            f"Review requested: {pm.title}",
            f"/postmortems/{pm.pk}/",
            f"review:{pm.pk}:{pm.version}",
        )
    old = pm.status
    pm.status, pm.review_requested_at = S.IN_REVIEW, timezone.now()
    pm.save()
    _history(pm, actor, "status", old, pm.status)
    postmortem_event(pm, actor, f"review requested from {', '.join(names)}")
    return pm


@transaction.atomic
def postmortem_comment(*, postmortem_id: int, actor, text: str, section: str = "") -> ReviewComment:
    _require(actor, DRAFT, "comment on postmortems")
    pm = _locked(postmortem_id)
    text = _text(text, what="comment", limit=5000).strip()
    if not text:
        raise DomainError("The comment is empty.", code="invalid")
    return ReviewComment.objects.create(
        postmortem=pm, author=actor, section=section[:32], text=text, created_at=timezone.now()
    )


@transaction.atomic
def postmortem_review(*, postmortem_id: int, actor, approve: bool, note: str = "") -> Reviewer:
    """A named reviewer approves, or asks for changes (which sends it back to draft)."""
    _require(actor, REVIEW, "review postmortems")
    pm = _locked(postmortem_id)
    reviewer = Reviewer.objects.filter(postmortem=pm, user=actor).first()
    if reviewer is None:
        raise PermissionDenied("You are not a reviewer of this postmortem.")
    if pm.status != S.IN_REVIEW:
        raise DomainError("The postmortem is not in review.", code="invalid_state")
    reviewer.state = ReviewerState.APPROVED if approve else ReviewerState.CHANGES
    reviewer.decided_at = timezone.now()
    reviewer.save()
    if note.strip():
        ReviewComment.objects.create(
            postmortem=pm,
            author=actor,
            text=_text(note, what="note", limit=5000).strip(),
            created_at=timezone.now(),
        )
    if not approve:
        pm.status = S.DRAFT
        pm.save()
        _history(pm, actor, "status", S.IN_REVIEW, S.DRAFT)
    postmortem_event(pm, actor, "approved" if approve else "changes requested")
    return reviewer


def postmortem_publish(*, postmortem_id: int, actor) -> Postmortem:
    """Publish once every named reviewer approved: the facts are refreshed from the
    incident first (it may have been resolved since the draft); from then on it is
    read-only."""
    from postmortems.services.drafting import postmortem_refresh

    _require(actor, PUBLISH, "publish postmortems")
    pm = Postmortem.objects.filter(pk=postmortem_id).first()
    if pm is not None and pm.status == S.IN_REVIEW and pm.draft_state == DraftState.READY:
        postmortem_refresh(postmortem_id=postmortem_id, actor=actor)
    return _publish(postmortem_id=postmortem_id, actor=actor)


@transaction.atomic
def _publish(*, postmortem_id: int, actor) -> Postmortem:
    pm = _locked(postmortem_id)
    if pm.status != S.IN_REVIEW:
        raise DomainError(
            "Send the postmortem for review before publishing it.", code="invalid_state"
        )
    pending = list(
        Reviewer.objects.filter(postmortem=pm)
        .exclude(state=ReviewerState.APPROVED)
        .values_list("user__username", flat=True)
    )
    if pending:
        raise DomainError(
            f"Waiting for approval from {', '.join(sorted(pending))}.", code="invalid_state"
        )
    pm.status, pm.published_at, pm.published_by = S.PUBLISHED, timezone.now(), actor
    pm.save()
    _history(pm, actor, "status", S.IN_REVIEW, S.PUBLISHED)
    postmortem_event(pm, actor, "published")
    return pm
