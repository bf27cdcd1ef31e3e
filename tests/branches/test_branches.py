"""Every branch of every runbook's decision tree is reached by some injection, through the
real stack: inject (a scenario or one of its variants, simulator/variants.py) -> a real
Prometheus alert -> Alertmanager -> an incident with the runbook -> triage picks the
branch. The main scenarios' branches, and the branches triage shows once a fix has
worked, are proven by the drill suite (tests/drill); the table below covers the rest, and
`test_every_branch_is_covered` checks that together they name every branch.
"""

import time

import pytest

from runbooks.catalog import load_catalog
from simulator.variants import VARIANTS
from tests.drill.test_scenarios import DRILLS
from tests.drill_stack import (
    active_runs,
    api,
    firing_alerts,
    incidents,
    newest_incident_id,
    settle_runs,
    simulator,
    wait_branch,
)
from tests.helpers import wait_for

pytestmark = [pytest.mark.branches, pytest.mark.timeout(300)]

# (slug, variant or "" for the main scenario, the branch, then (after `clear`) a branch).
# Order matters once: ttft-spike's capacity branches need a simulated day of history.
FLOWS = [
    ("ttft-spike", "batch-flood", "queueing", ""),
    ("ttft-spike", "gpu-throttle", "slow_decode", ""),
    ("nccl-hang", "pool-wide", "pool_wide_stall", ""),
    ("nccl-hang", "process-stall", "hang", ""),
    ("nccl-hang", "ejected", "idle", ""),
    ("prefix-cache-drop", "timestamped-prompts", "hit_rate_low", ""),
    ("retry-storm", "traffic-jump", "overload_errors", ""),
    ("retry-storm", "backend-down", "backend_errors", ""),
    ("garbage-output", "bad-checkpoint", "bad_model", ""),
    ("cuda-graph-capture", "node-fault", "pod_crashloop", ""),
    ("long-context-kv", "no-prompt-histogram", "kv_pressure", ""),
    # A burst of errors that stops, then a GPU reset (volatile count 0, the Xid stays).
    ("ecc-errors", "transient", "ecc_history", "xid_only"),
    # Errors, then the GPU is replaced: no evidence left on the node.
    ("ecc-errors", "", "bad_gpu_in_use", "no_evidence"),
    ("ttft-spike", "verbose-answers", "capacity_lost", ""),
    ("ttft-spike", "", "capacity", ""),
]
# A failure that fires another runbook's alert too: (slug, variant, other runbook, branch).
ALSO = [("ttft-spike", "", "long-context-kv", "load")]
TIMINGS: dict[str, dict[str, float]] = {}


def test_every_branch_is_covered():
    """The flows, the drills (at injection and after the fix) and the variants' declared
    branches name every branch of every runbook, and each variant is exercised."""
    reached = {(slug, branch) for slug, _, branch, _ in FLOWS}
    reached |= {(slug, after) for slug, _, _, after in FLOWS if after}
    reached |= {(other, branch) for _, _, other, branch in ALSO}
    for slug, (_, at_open, after_fix) in DRILLS.items():
        reached |= {(slug, at_open), (slug, after_fix)}
    branches = {(rb.slug, b.id) for rb in load_catalog().all() for b in rb.decision_tree}
    assert branches - reached == set(), "branches no injection reaches"
    assert reached - branches == set(), "branches the catalogue does not have"
    exercised = {(slug, variant) for slug, variant, _, _ in FLOWS if variant}
    declared = {(slug, v) for slug, variants in VARIANTS.items() for v in variants}
    assert declared == exercised
    for slug, variant, branch, _ in FLOWS:
        if variant:
            assert VARIANTS[slug][variant][0] == branch, (slug, variant)


def open_incident(stack, slug: str, alert: str) -> dict | None:
    """The runbook's open incident while its alert fires (a new one, or the one an
    earlier flow opened for the same alert group, which this firing keeps open)."""
    if alert not in {a["labels"]["alertname"] for a in firing_alerts(stack)
                     if a["state"] == "firing"}:  # fmt: skip
        return None
    found = open_ones(stack, slug)
    return max(found, key=lambda i: i["id"]) if found else None


def reject_waiting(stack) -> None:
    """The guarded-change watcher may ask to undo a scenario's config push; the suite
    studies the failure, so a commander says no."""
    for run in active_runs(stack):
        if run["status"] == "awaiting_approval":
            api(stack["approver"], "POST", f"{stack['base']}/api/v1/actions/{run['id']}/reject/",
                json={"note": "branch suite: keep the injected failure"})  # fmt: skip


def open_ones(stack, slug: str) -> list[dict]:
    """The runbook's open incidents, leaving out the demo data's (older than the suite)."""
    found = incidents(stack, f"?runbook={slug}")
    return [i for i in found if i["status"] in ("triggered", "acknowledged")
            and i["id"] > stack["first_id"]]  # fmt: skip


def quiet(stack, slug: str, alert: str) -> bool:
    """The runbook's alert neither fires nor is pending and none of its incidents is open:
    whatever opens next was opened by this flow, not left over from the one before."""
    if alert in {a["labels"]["alertname"] for a in firing_alerts(stack)}:
        return False
    return not open_ones(stack, slug)


@pytest.fixture
def fresh(branch_stack):
    branch_stack.setdefault("first_id", newest_incident_id(branch_stack))
    simulator(branch_stack["sim_url"], "reset")
    settle_runs(branch_stack)
    return branch_stack


@pytest.mark.parametrize(("slug", "variant", "branch", "after_clear"), FLOWS,
                         ids=[f"{s}-{v or 'main'}" for s, v, _, _ in FLOWS])  # fmt: skip
def test_branch(fresh, slug, variant, branch, after_clear):
    stack = fresh
    alert = load_catalog().get(slug).alerts[0]
    wait_for(lambda: quiet(stack, slug, alert), timeout=120, every=1,
             what=f"{alert} quiet and no {slug} incident open after the reset")  # fmt: skip
    t0 = time.monotonic()
    simulator(stack["sim_url"], "inject", slug, *(["--variant", variant] if variant else []))
    incident = wait_for(lambda: reject_waiting(stack) or open_incident(stack, slug, alert),
                        timeout=150, every=1, what=f"{alert}, {slug} incident")  # fmt: skip
    marks = {"incident": time.monotonic() - t0}
    wait_branch(stack, incident["id"], branch, timeout=150)
    marks[branch] = time.monotonic() - t0
    for other_slug, other_variant, other, other_branch in ALSO:
        if (other_slug, other_variant) == (slug, variant):
            other_alert = load_catalog().get(other).alerts[0]
            found = wait_for(lambda o=other, a=other_alert: open_incident(stack, o, a),
                             timeout=120, every=1, what=f"an open {other} incident")  # fmt: skip
            wait_branch(stack, found["id"], other_branch, timeout=90)
            marks[other_branch] = time.monotonic() - t0
    if after_clear:
        simulator(stack["sim_url"], "clear", slug)
        wait_branch(stack, incident["id"], after_clear, timeout=150)
        marks[after_clear] = time.monotonic() - t0
    name = f"{slug}/{variant or 'main'}"
    TIMINGS[name] = {k: round(v) for k, v in marks.items()}
    print(f"{name}: {TIMINGS[name]}")
