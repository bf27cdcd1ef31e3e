"""Which branch of a runbook's decision tree the fleet is in, and why.

Conditions use three-valued (Kleene) logic: a check that is "firing" is true, "ok" is
false, and "no_data"/"error" (or a check that was not run) is unknown. A branch matches
only when its condition is definitely true, so missing data never counts as firing and,
through `not`, never counts as healthy either. The first matching branch wins; the last
branch has no condition and catches everything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from runbooks.schema import STATES, Branch, Check, Condition, Runbook

Because = tuple[tuple[str, str], ...]  # (check id, state) pairs


@dataclass(frozen=True)
class Decision:
    branch: Branch
    because: Because  # the check states that made the branch match; () for the catch-all

    @property
    def is_catch_all(self) -> bool:
        return self.branch.when is None


def check_state(check: Check, value: float | None) -> str:
    """The state of one check given its query's value (None: the query returned nothing)."""
    return check.state_for(value)


def _eval(cond: Condition, states: Mapping[str, str]) -> tuple[bool | None, Because]:
    """(truth, the leaves that support it when true)."""
    if cond.op == "check":
        state = states.get(cond.check or "", "no_data")
        truth = {"firing": True, "ok": False}.get(state)
        return truth, ((cond.check or "", state),)
    if cond.op == "not":
        truth, leaves = _eval(cond.args[0], states)
        return (None if truth is None else not truth), leaves
    results = [_eval(a, states) for a in cond.args]
    truths = [t for t, _ in results]
    if cond.op == "all":
        if False in truths:
            return False, ()
        if None in truths:
            return None, ()
        return True, tuple(leaf for _, leaves in results for leaf in leaves)
    # any
    if True in truths:
        return True, tuple(leaf for t, leaves in results if t for leaf in leaves)
    return (None if None in truths else False), ()


def evaluate(runbook: Runbook, results: Mapping[str, str]) -> Decision:
    """The first branch whose condition holds for `results` (check id -> state)."""
    for check_id, state in results.items():
        if state not in STATES:
            raise ValueError(f"check {check_id!r}: unknown state {state!r}; expected {STATES}")
    for branch in runbook.decision_tree:
        if branch.when is None:
            return Decision(branch, ())
        truth, because = _eval(branch.when, results)
        if truth is True:
            return Decision(branch, tuple(dict.fromkeys(because)))
    raise AssertionError(f"{runbook.slug}: decision tree without a catch-all")  # validated on load
