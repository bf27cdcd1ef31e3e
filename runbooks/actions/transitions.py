"""The action-run state machine: which status moves are allowed, and which service makes
each. `run_record` (audit.py), the one writer of a run's status, refuses any other move;
services check first too, so a refused move is refused before anything else is touched.
"""

from __future__ import annotations

from incidents.lifecycle import TransitionError
from runbooks.actions.models import ActionRun, ActionRunStatus

S = ActionRunStatus

# The statuses a run is created in, and the service that creates it.
INITIAL: dict[str, str] = {
    S.AWAITING_APPROVAL: "action_run_request",
    S.QUEUED: "action_run_request",
}

# (from, to) -> the service that makes the move. Final statuses have no way out: a run
# that ended is history, and a new request is a new run.
ALLOWED: dict[tuple[str, str], str] = {
    (S.AWAITING_APPROVAL, S.QUEUED): "action_run_approve",
    (S.AWAITING_APPROVAL, S.REJECTED): "action_run_reject",
    (S.AWAITING_APPROVAL, S.CANCELLED): "action_run_cancel",
    (S.QUEUED, S.CANCELLED): "action_run_cancel",
    # The worker: claim, then one outcome (a lost worker's run is resumed, still running).
    (S.QUEUED, S.RUNNING): "action_run_execute",
    (S.RUNNING, S.SUCCEEDED): "action_run_execute",
    (S.RUNNING, S.FAILED): "action_run_execute",
}


def _label(status: str) -> str:
    # The value in words, not the (translated) label: this message reaches the API.
    return S(status).value.replace("_", " ")


def check_move(run: ActionRun, to: str, *, hint: str = "") -> None:
    """Raise TransitionError unless the table allows `run` (as in memory) to move to `to`.
    `hint` says what the caller needed instead; by default, where `to` is reached from."""
    if (run.status, to) in ALLOWED:
        return
    if not hint:
        froms = [_label(a) for a, b in ALLOWED if b == to]
        hint = (
            f"a run becomes {_label(to)} only from {' or '.join(froms)}"
            if froms
            else f"a run is {_label(to)} only when it is requested"
        )
    raise TransitionError(
        f"Cannot move action run #{run.pk} from {_label(run.status)} to {_label(to)}: {hint}."
    )
