"""Content revisions: a reviewer approves one revision of the postmortem, and only an
approved revision is published.

Every write that changes what would be published (the title, a text section, a timeline
line reworded, left out or added, an action item attached, facts refreshed from the
incident) calls `content_changed`: the revision goes up and the approvals given so far are
withdrawn, with a line on the incident timeline and a notification to those reviewers
(services/inbox.py).

Who may approve, and when it may be published, is read by selectors.py (the page shows
the same answer the services enforce).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_noop

from console.texts import Msg, msg
from postmortems.models import (
    Postmortem,
    PostmortemEdit,
    PostmortemStatus,
    Reviewer,
    ReviewerState,
)
from postmortems.services.inbox import notification_add
from postmortems.services.incident_timeline import postmortem_event, who_did


def content_changed(pm: Postmortem, *, actor: User, what: Msg, refreshed: bool = False) -> None:
    """Record that `what` (a phrase: "summary", "timeline line #4 added") changed in the
    published content. The caller holds the
    postmortem's row lock (so an approval cannot slip in between) and may save `pm` later:
    its in-memory revision is kept in step."""
    pm.revision += 1
    Postmortem.objects.filter(pk=pm.pk).update(revision=pm.revision)
    who = who_did(actor)
    if pm.status == PostmortemStatus.PUBLISHED:
        # Admins correct published postmortems (e.g. redact a leaked token) without a new
        # review; the timeline and the edit history say so.
        line = msg(
            "postmortems.what.edited_after_publication",
            who=who,
            what=what,
            revision=pm.revision,
            published=pm.published_revision,
        )
        postmortem_event(pm, actor, line, revision=pm.revision)
        return
    approvals = list(
        Reviewer.objects.filter(postmortem=pm, state=ReviewerState.APPROVED).select_related("user")
    )
    if not approvals:
        return
    names = sorted(r.user.get_username() for r in approvals)
    Reviewer.objects.filter(pk__in=[r.pk for r in approvals]).update(
        state=ReviewerState.REQUESTED, decided_at=None, approved_revision=None
    )
    PostmortemEdit.objects.create(
        postmortem=pm,
        editor=actor,
        at=timezone.now(),
        field="approvals",
        old=", ".join(names),
        new=f"withdrawn: {what.english} changed",
    )
    key = "refreshed_after_approval" if refreshed else "edited_after_approval"
    if pm.status == PostmortemStatus.IN_REVIEW:
        key += "_in_review"
    line = msg(f"postmortems.what.{key}", who=who, what=what, names=", ".join(names))
    postmortem_event(pm, actor, line, revision=pm.revision)
    link = reverse("postmortems:detail", args=[pm.pk])
    for reviewer in approvals:
        notification_add(
            user=reviewer.user,
            kind="review",
            message=gettext_noop("Changed after your approval, please review again: %(title)s"),
            link=link,
            key=f"reapprove:{pm.pk}:{pm.revision}",
            params={"title": pm.title},
        )
