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

from actions import texts  # noqa: F401  (registry: the ids below)
from actions.concerns import open_incidents_about
from actions.permissions import APPROVE_ACTION
from console.texts import Msg, join, msg

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
) -> tuple[bool, Msg | None]:
    """(needed, why) for a run of `kind` with `params`, filed on `incident`: `why` is
    sentences, the last naming who must approve (None when not needed). `current` and
    `plan` (Snapshot, Plan) are None when Kubernetes could not be read. One query."""
    reasons: list[Msg] = []
    if kind.name in approval_kinds(kinds):
        reasons.append(msg("actions.approval.risky", kind=kind.name))
    severities = approval_severities()
    if incident.severity in severities:
        reasons.append(msg("actions.approval.severity", severity=incident.severity))
    concerns = open_incidents_about(
        subjects=kind.subjects(params, current),
        severities=severities,
        exclude_incident_id=incident.pk,
    )
    reasons += [
        msg(
            "actions.approval.concern",
            id=c.incident_id,
            severity=c.severity,
            subject=c.subject.name,
        )
        for c in concerns[:NAMED_INCIDENTS]
    ]
    if len(concerns) > NAMED_INCIDENTS:
        reasons.append(msg("actions.approval.more", count=len(concerns) - NAMED_INCIDENTS))
    note = kind.approval_note(params, current, plan)
    if note is not None:
        reasons.append(note)
    if not reasons:
        return False, None
    return True, join([*reasons, msg("actions.approval.then")])


def reason_english(why: Msg | None) -> str:
    """`why` in English, at most REASON_MAX characters (ActionRun.approval_reason; the
    parts beside it keep every word)."""
    text = why.english if why is not None else ""
    return text if len(text) <= REASON_MAX else text[: REASON_MAX - 1] + "…"


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
