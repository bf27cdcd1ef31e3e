"""The escalation state machine: which moves are allowed and which service makes each.
Every change of an escalation's state goes through `escalation_move`, which refuses any
other; tests/unit/pager/test_transitions.py keeps this table and the engine in step.

Pages and their deliveries have their own small lifecycles, kept by the paging service
(pager/paging/services/pages.py): a page is PENDING until it is DELIVERED, FAILED or
ACKNOWLEDGED; a delivery goes PENDING -> SENDING -> SENT | FAILED | UNKNOWN, or SKIPPED.
"""

from __future__ import annotations

from django.utils.translation import gettext_noop

from incidents.transitions import TransitionError
from pager.models import Escalation, EscalationState

S = EscalationState

# The states an escalation starts in (escalation_start decides which).
INITIAL: dict[str, str] = {
    S.ACTIVE: "escalation_start",
    S.ACKNOWLEDGED: "escalation_start (the incident was acknowledged before paging began)",
    S.SUPPRESSED: "escalation_start (inside a maintenance window)",
    S.STOPPED: "escalation_start (drill, demo, no policy, or already mitigated/resolved)",
}

# (from, to) -> the service that makes the move.
ALLOWED: dict[tuple[str, str], str] = {
    (S.ACTIVE, S.ACKNOWLEDGED): "escalation_on_ack",
    (S.EXHAUSTED, S.ACKNOWLEDGED): "escalation_on_ack (a late acknowledgement)",
    (S.ACTIVE, S.STOPPED): "escalation_stop",
    (S.ACKNOWLEDGED, S.STOPPED): "escalation_stop",
    (S.ACTIVE, S.EXHAUSTED): "escalation_advance (every step and repeat ran)",
    (S.ACKNOWLEDGED, S.ACTIVE): "escalations_tick (the acknowledgement expired: a new round)",
    (S.SUPPRESSED, S.ACTIVE): "escalations_tick (the window is over and it still fires)",
    (S.STOPPED, S.ACTIVE): "escalation_start (fired again after mitigation: a new round)",
    (S.STOPPED, S.ACKNOWLEDGED): "escalation_start (fired again, still acknowledged)",
}


def escalation_move(escalation: Escalation, to: str) -> None:
    """Set the state, if the move is allowed (an unsaved escalation: a starting state)."""
    new = escalation.pk is None
    allowed = to in INITIAL if new else (escalation.state, to) in ALLOWED
    if not allowed:
        raise TransitionError(
            gettext_noop("An escalation cannot go from %(from)s to %(to)s."),
            params={"from": escalation.state if escalation.pk else "new", "to": to},
        )
    escalation.state = to
