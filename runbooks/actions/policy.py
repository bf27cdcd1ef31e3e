"""Who may do what with an action run, and which runs need a second person.

Risky kinds (the kind says so; settings ACTIONS_APPROVAL_KINDS overrides the list) and
incidents at a severity in ACTIONS_APPROVAL_SEVERITIES need approval by someone else with
the commander role. The requester never approves their own run.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied

VIEW = "runbooks.view_actionrun"
REQUEST = "runbooks.request_actionrun"
APPROVE = "runbooks.approve_actionrun"


def require(actor, perm: str, what: str) -> None:
    if actor is None or not actor.is_authenticated or not actor.has_perm(perm):
        raise PermissionDenied(f"Your role does not allow you to {what}.")


def approval_kinds(kinds: dict) -> set[str]:
    configured = getattr(settings, "ACTIONS_APPROVAL_KINDS", None)
    if configured is not None:
        return set(configured)
    return {name for name, kind in kinds.items() if kind.risky}


def approval_required(*, kind, kinds: dict, severity: str) -> tuple[bool, str]:
    """(needed, why) for a run of `kind` on an incident at `severity`."""
    reasons = []
    if kind.name in approval_kinds(kinds):
        reasons.append(f"{kind.name} is a risky action")
    if severity in getattr(settings, "ACTIONS_APPROVAL_SEVERITIES", ("SEV1",)):
        reasons.append(f"the incident is {severity}")
    if not reasons:
        return False, ""
    return True, " and ".join(reasons) + ": a commander other than the requester must approve."


def can_decide(actor, run) -> tuple[bool, str]:
    """Whether `actor` may approve or reject `run`, and if not, why (shown to them)."""
    if actor is None or not actor.is_authenticated:
        return False, "Sign in to approve."
    if run.requested_by_id == actor.pk:
        return (
            False,
            "You requested this run; someone else with the commander role must approve it.",
        )
    if not actor.has_perm(APPROVE):
        return False, "Waiting for a commander to approve: your role cannot approve runs."
    return True, ""


def can_cancel(actor, run) -> bool:
    if actor is None or not actor.is_authenticated:
        return False
    return run.requested_by_id == actor.pk or actor.has_perm(APPROVE)
