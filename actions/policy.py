"""Who may do what with an action run, and which runs need a second person.

A run needs approval by someone else with the commander role when any of these holds:
its kind is risky (the kind says so; settings ACTIONS_APPROVAL_KINDS overrides the list);
its incident is at a severity in ACTIONS_APPROVAL_SEVERITIES; another open incident at
such a severity is about what the run changes (its alerts' labels name the same LWS,
ConfigMap namespace or node), so filing the run on a quiet incident does not skip the
check; or the kind finds the change itself needs it (a scale-down far below the ready
groups). The requester never approves their own run.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.utils.translation import gettext_noop

from actions.concerns import open_incidents_about
from actions.permissions import APPROVE_ACTION

NAMED_INCIDENTS = 2  # the reason names this many; the rest are counted
REASON_MAX = 300  # ActionRun.approval_reason


def approval_kinds(kinds: dict) -> set[str]:
    configured = settings.ACTIONS_APPROVAL_KINDS
    if configured is not None:
        return set(configured)
    return {name for name, kind in kinds.items() if kind.risky}


def approval_severities() -> tuple[str, ...]:
    return tuple(settings.ACTIONS_APPROVAL_SEVERITIES)


def approval_required(
    *, kind, kinds: dict, incident, params: dict, current=None, plan=None
) -> tuple[bool, str]:
    """(needed, why) for a run of `kind` with `params`, filed on `incident`. `current` and
    `plan` (Snapshot, Plan) are None when Kubernetes could not be read. One query."""
    reasons = []
    if kind.name in approval_kinds(kinds):
        reasons.append(f"{kind.name} is a risky action")
    severities = approval_severities()
    if incident.severity in severities:
        reasons.append(f"the incident is {incident.severity}")
    concerns = open_incidents_about(
        subjects=kind.subjects(params, current),
        severities=severities,
        exclude_incident_id=incident.pk,
    )
    reasons += [
        f"incident #{c.incident_id} ({c.severity}) is about {c.subject.name}"
        for c in concerns[:NAMED_INCIDENTS]
    ]
    if len(concerns) > NAMED_INCIDENTS:
        reasons.append(f"{len(concerns) - NAMED_INCIDENTS} more open incident(s) are about it")
    note = kind.approval_note(params, current, plan)
    if note:
        reasons.append(note)
    if not reasons:
        return False, ""
    why, then = "; ".join(reasons), ": a commander other than the requester must approve."
    room = REASON_MAX - len(then)  # the run keeps at most REASON_MAX characters
    return True, (why if len(why) <= room else why[: room - 1] + "…") + then


def can_decide(actor: User, run) -> tuple[bool, str]:
    """Whether `actor` may approve or reject `run`, and if not, why (shown to them). The
    reason is English (the API says it); the card translates it."""
    if actor is None or not actor.is_authenticated:
        return False, gettext_noop("Sign in to approve.")
    if run.requested_by_id == actor.pk:
        return (
            False,
            gettext_noop(
                "You requested this run; someone else with the commander role must approve it."
            ),
        )
    if not actor.has_perm(APPROVE_ACTION):
        return False, gettext_noop(
            "Waiting for a commander to approve: your role cannot approve runs."
        )
    return True, ""


def can_cancel(actor: User, run) -> bool:
    if actor is None or not actor.is_authenticated:
        return False
    return run.requested_by_id == actor.pk or actor.has_perm(APPROVE_ACTION)
