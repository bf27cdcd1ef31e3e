"""Shared by the postmortem pages: loading rows or 404, turning a service's refusal into
the console's usual answer (403 page / flash message), and the lists of people the pages
offer (owners, reviewers) and the blameless check looks for."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import redirect

from console import roles
from console.errors import DomainError
from incidents.views import _flash, _forbidden
from postmortems import selectors
from postmortems.models import DraftState, Postmortem, PostmortemStatus

VIEW = "postmortems.view_postmortem"
VIEW_ITEMS = "postmortems.view_actionitem"
DRAFT = "postmortems.draft_postmortem"
MANAGE = "postmortems.manage_actionitem"
REVIEW = "postmortems.review_postmortem"
PUBLISH = "postmortems.publish_postmortem"
ADMIN_EDIT = "postmortems.change_postmortem"


def postmortem_or_404(pk: int) -> Postmortem:
    pm = selectors.postmortem_get(postmortem_id=pk)
    if pm is None:
        raise Http404(f"Postmortem #{pk} does not exist.")
    return pm


def can_edit(user, pm: Postmortem) -> bool:
    """Mirrors the services' rule so the page hides forms it would refuse anyway (the
    services still decide)."""
    if not user.has_perm(DRAFT) or pm.draft_state != DraftState.READY:
        return False
    return pm.status != PostmortemStatus.PUBLISHED or user.has_perm(ADMIN_EDIT)


def active_users() -> list:
    """Everyone who can own an item; one query, reused for the blameless names."""
    return list(
        get_user_model()
        .objects.filter(is_active=True)
        .only("id", "username", "first_name", "last_name")
        .order_by("username")
    )


def reviewer_candidates() -> list[str]:
    """Usernames that hold the review permission (commander and admin roles)."""
    users = get_user_model().objects.filter(is_active=True)
    users = users.filter(Q(groups__name__in=(roles.COMMANDER, roles.ADMIN)) | Q(is_superuser=True))
    return sorted(set(users.values_list("username", flat=True)))


def people_names(users, incident) -> list[str]:
    """What the blameless check treats as a person: every username and full name, and the
    incident's commander (who may since have been deactivated)."""
    names = []
    for user in users:
        names.append(user.username)
        full = f"{user.first_name} {user.last_name}".strip()
        if full:
            names.append(full)
    commander = getattr(incident, "commander", None)
    if commander is not None:
        names += [commander.username, commander.get_full_name()]
    return [n for n in names if n]


def refused(request, exc: Exception, *, back: str) -> HttpResponse:
    """A service said no: 403 for a role, 404 for a missing row, else the message (409)."""
    if isinstance(exc, PermissionDenied):
        return _forbidden(request, str(exc) or "Your role does not allow this.")
    if isinstance(exc, DomainError) and exc.code == "not_found":
        raise Http404(str(exc))
    if request.htmx:
        return _flash(request, str(exc), status=409)
    messages.error(request, str(exc))
    return redirect(back)


def perform(request, call: Callable[[], object], *, done: str, back: str) -> HttpResponse:
    """Run one service call from a plain form: redirect back with a message either way."""
    try:
        call()
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=back)
    messages.success(request, done)
    return redirect(back)
