"""The review workflow: draft -> in review (named reviewers, comments, changes requested)
-> published, the moves postmortems/transitions.py allows. An approval is of the
postmortem's current revision; any content change withdraws it (services/revisions.py),
and publishing needs approvals of the revision being published. A reviewer who wrote
every edit cannot approve alone (see revisions.py).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError, NotAllowed
from console.permissions import require
from console.texts import msg
from postmortems.models import DraftState, Postmortem, ReviewComment, Reviewer, ReviewerState
from postmortems.permissions import DRAFT, PUBLISH, REVIEW
from postmortems.selectors import postmortem_publish_refusal, postmortem_sole_author_id
from postmortems.services.documents import (
    S,
    _editable,
    _history,
    _locked,
    _text,
)
from postmortems.services.drafting import postmortem_refresh
from postmortems.services.inbox import notification_add
from postmortems.services.incident_timeline import postmortem_event
from postmortems.transitions import check_status


# A refusal inside another one: English where the outer one is (the API), translated
# where the outer one is translated (a page).
def _translated(refusal: DomainError) -> str:
    return refusal.translated()


_lazy_message = lazy(_translated, str)


def _status_move(pm: Postmortem, to: str, *, actor: User) -> None:
    """The one writer of a postmortem's status: the move is checked against
    transitions.py, stamped, saved, and kept in the edit history. The caller holds the lock."""
    old = pm.status
    check_status(pm, to)
    pm.status = to
    if to == S.IN_REVIEW:
        pm.review_requested_at = timezone.now()
    if to == S.PUBLISHED:
        pm.published_at, pm.published_by = timezone.now(), actor
        pm.published_revision = pm.revision
    pm.save()
    _history(pm, actor, "status", old, to)


@transaction.atomic
def postmortem_request_review(
    *, postmortem_id: int, actor: User, reviewers: list[str]
) -> Postmortem:
    """Name reviewers (usernames) and move the draft to review; they get a notification."""
    pm = _locked(postmortem_id)
    _editable(pm, actor)
    check_status(pm, S.IN_REVIEW)
    names = sorted({r.strip() for r in reviewers if r and r.strip()})
    if not names:
        raise DomainError(gettext_noop("Name at least one reviewer."), code="invalid")
    users = list(get_user_model().objects.filter(username__in=names, is_active=True))
    missing = sorted(set(names) - {u.username for u in users})
    if missing:
        raise DomainError(
            gettext_noop("No active user named %(names)s."),
            code="invalid",
            params={"names": ", ".join(missing)},
        )
    for user in users:
        if not user.has_perm(REVIEW):
            raise DomainError(
                gettext_noop("%(name)s cannot review postmortems (needs the commander role)."),
                params={"name": user.username},
            )
        Reviewer.objects.update_or_create(
            postmortem=pm,
            user=user,
            defaults={
                "state": ReviewerState.REQUESTED,
                "decided_at": None,
                "approved_revision": None,
            },
        )
        notification_add(
            user=user,
            kind="review",
            message=gettext_noop("Review requested: %(title)s"),
            link=reverse("postmortems:detail", args=[pm.pk]),
            key=f"review:{pm.pk}:{pm.revision}",
            params={"title": pm.title},
        )
    _status_move(pm, S.IN_REVIEW, actor=actor)
    postmortem_event(pm, actor, msg("postmortems.what.review_requested", names=", ".join(names)))
    return pm


@transaction.atomic
def postmortem_comment(
    *, postmortem_id: int, actor: User, text: str, section: str = ""
) -> ReviewComment:
    require(actor, DRAFT, gettext_lazy("comment on postmortems"))
    pm = _locked(postmortem_id)
    text = _text(text, what="comment", limit=5000).strip()
    if not text:
        raise DomainError(gettext_noop("The comment is empty."), code="invalid")
    return ReviewComment.objects.create(
        postmortem=pm, author=actor, section=section[:32], text=text, created_at=timezone.now()
    )


@transaction.atomic
def postmortem_review(
    *, postmortem_id: int, actor: User, approve: bool, note: str = ""
) -> Reviewer:
    """A named reviewer approves the current revision, or asks for changes (which sends it
    back to draft). The only author of every edit cannot approve."""
    require(actor, REVIEW, gettext_lazy("review postmortems"))
    pm = _locked(postmortem_id)
    reviewer = Reviewer.objects.filter(postmortem=pm, user=actor).first()
    if reviewer is None:
        raise NotAllowed(gettext_noop("You are not a reviewer of this postmortem."))
    if not approve:
        check_status(
            pm,
            S.DRAFT,
            hint=gettext_lazy("only a postmortem in review is sent back for changes"),
        )
    elif pm.status != S.IN_REVIEW:  # approving moves nothing, but is of a review
        raise DomainError(gettext_noop("The postmortem is not in review."), code="invalid_state")
    if approve and postmortem_sole_author_id(pm) == actor.pk:
        raise DomainError(
            gettext_noop(
                "You wrote every edit of this postmortem, so another reviewer has to approve "
                "it (or someone else writes part of it). You can still request changes."
            ),
            code="invalid_state",
        )
    reviewer.state = ReviewerState.APPROVED if approve else ReviewerState.CHANGES
    reviewer.approved_revision = pm.revision if approve else None
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
        _status_move(pm, S.DRAFT, actor=actor)
    what = "approved" if approve else "changes_requested"
    postmortem_event(pm, actor, msg(f"postmortems.what.{what}"), revision=pm.revision)
    return reviewer


def postmortem_publish(*, postmortem_id: int, actor: User) -> Postmortem:
    """Publish the revision every named reviewer approved; from then on it is read-only.

    The facts are refreshed from the incident first (it may have moved on since the
    draft). That refresh is committed on its own: if it changed the content, the approvals
    it withdrew are needed again and publishing is refused, so nothing unapproved is
    published."""
    require(actor, PUBLISH, gettext_lazy("publish postmortems"))
    pm = Postmortem.objects.filter(pk=postmortem_id).first()
    refreshed = False
    if pm is not None and pm.status == S.IN_REVIEW and pm.draft_state == DraftState.READY:
        refreshed = postmortem_refresh(postmortem_id=pm.pk, actor=actor).revision != pm.revision
    return _publish(postmortem_id=postmortem_id, actor=actor, refreshed=refreshed)


@transaction.atomic
def _publish(*, postmortem_id: int, actor: User, refreshed: bool) -> Postmortem:
    pm = _locked(postmortem_id)
    draft = pm.status == S.DRAFT
    hint = gettext_lazy("send it for review before publishing it") if draft else ""
    check_status(pm, S.PUBLISHED, hint=hint)
    reviewers = list(Reviewer.objects.filter(postmortem=pm).select_related("user"))
    refusal = postmortem_publish_refusal(pm, reviewers, postmortem_sole_author_id(pm))
    if refusal is not None:
        if refreshed:
            raise DomainError(
                gettext_noop(
                    "The incident has changed since it was approved: refreshing it before "
                    "publishing brought in new facts, so it is back in review. %(why)s"
                ),
                code="invalid_state",
                params={"why": _lazy_message(refusal)},
            )
        raise refusal
    _status_move(pm, S.PUBLISHED, actor=actor)
    postmortem_event(pm, actor, msg("postmortems.what.published"), revision=pm.revision)
    return pm
