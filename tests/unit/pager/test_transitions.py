"""The escalation state machine, written out here apart from pager/transitions.py so a
change to either fails until both agree; and the guard refuses a move the table lacks."""

import pytest
from django.utils import timezone

from incidents.transitions import TransitionError
from pager.models import Escalation, EscalationState
from pager.transitions import ALLOWED, INITIAL, escalation_move
from tests.factories import IncidentFactory

S = EscalationState

EXPECTED_INITIAL = {S.ACTIVE, S.ACKNOWLEDGED, S.SUPPRESSED, S.STOPPED}
EXPECTED = {
    (S.ACTIVE, S.ACKNOWLEDGED),
    (S.EXHAUSTED, S.ACKNOWLEDGED),
    (S.ACTIVE, S.STOPPED),
    (S.ACKNOWLEDGED, S.STOPPED),
    (S.ACTIVE, S.EXHAUSTED),
    (S.ACKNOWLEDGED, S.ACTIVE),
    (S.SUPPRESSED, S.ACTIVE),
    (S.STOPPED, S.ACTIVE),
    (S.STOPPED, S.ACKNOWLEDGED),
}


def test_the_table_is_the_one_written_here():
    assert set(INITIAL) == EXPECTED_INITIAL
    assert set(ALLOWED) == EXPECTED


@pytest.mark.django_db
@pytest.mark.parametrize("start", list(S))
@pytest.mark.parametrize("to", list(S))
def test_only_the_table_moves_a_saved_escalation(start, to):
    escalation = Escalation.objects.create(
        incident=IncidentFactory(), state=start, started_at=timezone.now()
    )
    if (start, to) in EXPECTED:
        escalation_move(escalation, to)
        assert escalation.state == to
    else:
        with pytest.raises(TransitionError):
            escalation_move(escalation, to)
        assert escalation.state == start


def test_a_new_escalation_starts_only_in_a_starting_state():
    with pytest.raises(TransitionError):
        escalation_move(Escalation(), S.EXHAUSTED)
    fresh = Escalation()
    escalation_move(fresh, S.SUPPRESSED)
    assert fresh.state == S.SUPPRESSED
