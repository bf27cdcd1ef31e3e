"""The action-run state machine: which status moves are allowed, and which service makes
each. `run_record` (audit.py), the one writer of a run's status, refuses any other move;
services check first too, so a refused move is refused before anything else is touched.
"""

from __future__ import annotations

from django.utils.functional import Promise, lazy
from django.utils.translation import gettext, gettext_noop, pgettext

from actions.models import ActionRun, ActionRunStatus, run_status_word
from incidents.transitions import TransitionError

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


BECOMES_FROM = gettext_noop("a run becomes %(to)s only from %(froms)s")
ONLY_REQUESTED = gettext_noop("a run is %(to)s only when it is requested")


def _hint(to: str) -> str:
    # Built when shown: English in the refusal (the API), the page's language on a page.
    froms = [run_status_word(a) for a, b in ALLOWED if b == to]
    if not froms:
        return gettext(ONLY_REQUESTED) % {"to": run_status_word(to)}
    joiner = f" {pgettext('one status or another', 'or')} "
    return gettext(BECOMES_FROM) % {
        "to": run_status_word(to),
        "froms": joiner.join(str(f) for f in froms),
    }


_lazy_hint = lazy(_hint, str)


def check_move(run: ActionRun, to: str, *, hint: str | Promise = "") -> None:
    """Raise TransitionError unless the table allows `run` (as in memory) to move to `to`.
    `hint` says what the caller needed instead (lazy, for pages); by default, where `to`
    is reached from."""
    if (run.status, to) in ALLOWED:
        return
    raise TransitionError(
        gettext_noop("Cannot move action run #%(id)s from %(from)s to %(to)s: %(hint)s."),
        params={
            "id": run.pk,
            "from": run_status_word(run.status),
            "to": run_status_word(to),
            "hint": hint or _lazy_hint(to),
        },
    )
