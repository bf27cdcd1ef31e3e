"""The postmortems app's permission strings, and the rules the pages and the services both
apply: who may edit a postmortem now, and when an incident's postmortem may be drafted.
The pages call the same rule the services enforce, so a form shows only when the save
would be allowed."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils.translation import gettext_noop

from console.errors import DomainError, NotAllowed
from incidents.models import IncidentStatus
from postmortems.models import DraftState, PostmortemStatus

VIEW = "postmortems.view_postmortem"
VIEW_ITEMS = "postmortems.view_actionitem"
DRAFT = "postmortems.draft_postmortem"
MANAGE = "postmortems.manage_actionitem"
REVIEW = "postmortems.review_postmortem"
PUBLISH = "postmortems.publish_postmortem"
ADMIN_EDIT = "postmortems.change_postmortem"  # an admin changes even a published one
# Once impact has stopped the timeline is complete enough to write up.
DRAFTABLE = (IncidentStatus.MITIGATED, IncidentStatus.RESOLVED)


def edit_refusal(user: User, pm) -> Exception | None:
    """Why `user` may not edit `pm` now, as the error the services raise; None if they may."""
    if user is None or not user.is_authenticated or not user.has_perm(DRAFT):
        return NotAllowed(gettext_noop("Your role does not allow you to edit postmortems."))
    if pm.draft_state != DraftState.READY:
        return DomainError(
            gettext_noop("The postmortem is still being drafted; try again in a moment.")
        )
    if pm.status == PostmortemStatus.PUBLISHED and not user.has_perm(ADMIN_EDIT):
        return NotAllowed(
            gettext_noop("This postmortem is published; only an admin can change it.")
        )
    return None


def can_edit(user: User, pm) -> bool:
    return edit_refusal(user, pm) is None


def ready_to_draft(incident) -> bool:
    return incident.status in DRAFTABLE
