"""Every branch of every runbook's decision tree can be reached: some combination of its
checks' states selects it, so no branch is shadowed by the ones above it. (Which
injection reaches each branch live: tests/branches and tests/drill.)"""

import itertools

import pytest

from runbooks.catalog import DEFAULT_DIR, load_catalog
from runbooks.decisions import evaluate

CATALOG = load_catalog(DEFAULT_DIR)


@pytest.mark.parametrize("slug", sorted(CATALOG.runbooks))
def test_every_branch_is_reachable_by_some_check_states(slug):
    runbook = CATALOG.get(slug)
    ids = [c.id for c in runbook.triage]
    reached = {
        evaluate(runbook, dict(zip(ids, states, strict=True))).branch.id
        for states in itertools.product(("firing", "ok", "no_data"), repeat=len(ids))
    }
    unreachable = [b.id for b in runbook.decision_tree if b.id not in reached]
    assert not unreachable, f"{slug}: shadowed branches {unreachable}"
