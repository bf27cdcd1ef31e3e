"""Shared by the postmortem pages: loading a postmortem or 404, and the lists of people
the pages offer (owners, reviewers) and the blameless check looks for. A service's
refusal is answered by console/web.py; who may do what is in postmortems/permissions.py."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import Http404

from console import roles
from postmortems import selectors
from postmortems.models import Postmortem


def postmortem_or_404(pk: int) -> Postmortem:
    pm = selectors.postmortem_get(postmortem_id=pk)
    if pm is None:
        raise Http404(f"Postmortem #{pk} does not exist.")
    return pm


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
