"""The eight failure scenarios one after another on one `make run`, at real speed, the
way a team works (issue 25): inject -> the real alert opens an incident -> the responder
acknowledges and is in command -> the triage API's recommended action is requested as
the API offers it (a second commander approves where needed) -> the run succeeds -> the
fleet recovers -> the alert resolves -> the incident is mitigated -> the responder
resolves it. An unrelated incident (another namespace, sent to Alertmanager) is open
during the first three. The fleet is never reset: after its incident is resolved, each
scenario is cleared (`simulator clear <slug>`: the traffic surge ends, the GPU is
replaced, the clients calm down; for a fixed scenario it changes nothing else), except
cuda-graph-capture, whose clear would roll the release back, a second change to the
workload on top of the fix, so it stays active and fixed.

The guard must request no undo of any of these fixes: each scenario checks its own fix's
guard so far, a monitor thread notes every verdict as it happens, and the last test waits
for every guard window (10 minutes each, the runbooks' own) to end and checks them all.
Results (times, branches, verdicts): var/realspeed-last.json (tests/realspeed/steps.py).
"""

import time
import uuid
from datetime import timedelta

import pytest

from tests.drill_stack import incidents, newest_incident_id, simulator, triage
from tests.helpers import wait_for
from tests.realspeed import steps
from tests.realspeed.guardwatch import all_runs, findings, fix_text, guard_text

pytestmark = [pytest.mark.realspeed, pytest.mark.timeout(3000)]

# slug -> its alert. The drill suite's order, except long-context-kv first: without a
# reset between scenarios, ttft-spike's scale-up (4 -> 6 groups) stays, and with it the
# long prompts never fill vllm-chat's KV cache past the alert's 95 % (the first run, in
# the drill's order, waited 10 minutes for an alert that could not fire). Its own fix
# (the gateway's threshold back to <= 32768) leaves the chat pool as it was.
SCENARIOS = {
    "long-context-kv": "VLLMKVCachePressure",
    "ttft-spike": "VLLMHighTTFT",
    "nccl-hang": "VLLMEngineStalled",
    "prefix-cache-drop": "VLLMPrefixCacheHitRateDrop",
    "retry-storm": "VLLMRetryStorm",
    "garbage-output": "VLLMOutputQualityRegression",
    "ecc-errors": "GPUECCErrors",
    "cuda-graph-capture": "VLLMCrashLooping",
}
UNRELATED_DURING = ("long-context-kv", "ttft-spike", "nccl-hang")
NOT_CLEARED = {"cuda-graph-capture"}
# Real-speed deadlines (seconds): the rules' `for:` is 30 s-1 min over 1-5 min windows,
# a new group takes 20 s to start, Alertmanager groups within 5-10 s.
INCIDENT_S, TRIAGE_S, RUN_S, RECOVER_S, MITIGATED_S, LEFTOVER_S = 600, 300, 300, 600, 900, 600

RESULTS: dict = {"scenarios": {}, "guard_events": []}


@pytest.fixture(scope="module")
def stack(real_stack):
    RESULTS.update(
        revision=steps.revision(), started=time.strftime("%Y-%m-%d %H:%M:%S %z"),
        first_id=newest_incident_id(real_stack),  # the demo data's incidents end here
        settings="make run as is: simulator speed 1, deploy/prometheus/rules, the runbook "
        "catalogue, guard windows of the runbooks (600 s), scrape/evaluate 5 s",
    )  # fmt: skip
    real_stack["t0"] = time.monotonic()
    return real_stack


def _save(stack) -> None:
    RESULTS["guard_events"] = stack["monitor"].events
    RESULTS["minutes"] = round((time.monotonic() - stack["t0"]) / 60, 1)
    steps.write_results(stack, RESULTS)


def test_unrelated_incident_opens(stack):
    """Something else is wrong at the same time: an alert in another namespace."""
    steps.am_alert(stack, ends_in=timedelta(hours=6))
    found = wait_for(
        lambda: [i for i in incidents(stack, "?q=" + steps.UNRELATED["alertname"])
                 if i["id"] > RESULTS["first_id"] and i["status"] in steps.OPEN],
        timeout=120, every=2, what="the unrelated BatchQueueBacklog incident",
    )  # fmt: skip
    iid = RESULTS["unrelated"] = found[0]["id"]
    steps.take_command(stack, iid)
    RESULTS["unrelated_open_during"] = []
    _save(stack)


def _end_unrelated(stack) -> None:
    iid = RESULTS.get("unrelated")
    if iid is None:
        return
    steps.am_alert(stack, ends_in=timedelta(seconds=-1))
    wait_for(lambda: steps.resolve_when_mitigated(stack, iid, "batch queue drained"),
             timeout=MITIGATED_S, every=2,
             what=f"the unrelated incident #{iid} to be mitigated and resolved")  # fmt: skip


@pytest.mark.parametrize("slug", list(SCENARIOS))
def test_scenario(stack, slug):
    record: dict = {"slug": slug, "alert": SCENARIOS[slug], "times": {}}
    RESULTS["scenarios"][slug] = record
    stack["monitor"].current = slug
    t0 = time.monotonic()

    def mark(name: str) -> None:
        record["times"][name] = round(time.monotonic() - t0)

    try:
        _scenario(stack, slug, record, mark)
    except BaseException as exc:
        record["error"] = str(exc)[:3000]
        raise
    finally:
        _save(stack)
        print(f"{slug}: {record}", flush=True)


def _scenario(stack, slug, record, mark) -> None:
    base = stack["base"]
    unrelated = RESULTS.get("unrelated")
    open_at_start = steps.is_open(stack, unrelated)
    before = newest_incident_id(stack)
    # Not open now: an incident of this runbook that fires again is this scenario's (the
    # console reopens a group resolved within INCIDENT_REOPEN_WINDOW_SECONDS, and brings a
    # mitigated one back to triggered).
    quiet = {i["id"] for i in incidents(stack, f"?runbook={slug}") if i["status"] not in steps.OPEN}
    simulator(stack["sim_url"], "inject", slug)

    # Detect: a new incident with this runbook, or a quiet one of it firing again.
    def opened():
        for i in incidents(stack, f"?runbook={slug}"):
            if i["id"] > before or (i["id"] in quiet and i["status"] in steps.OPEN):
                return i
        return None

    try:
        found = wait_for(opened, timeout=INCIDENT_S, every=2,
                         what=f"{slug}: an incident with runbook {slug}")  # fmt: skip
    except AssertionError as exc:  # say whether the fleet as left by earlier fixes masks it
        status = simulator(stack["sim_url"], "status", "--json")
        active = [s for s in status["active_scenarios"] if s["slug"] == slug]
        raise AssertionError(f"{exc}; simulator: {active}, pools: {status.get('pools')}") from None
    mark("incident")
    iid = record["incident"] = found["id"]
    record.update(title=found["title"], severity=found.get("severity"))
    record["commander"] = steps.take_command(stack, iid)

    # Triage: wait for the recommended action, then request it exactly as offered.
    seen: list[str] = []

    def recommended():
        answer = triage(stack, iid)
        branch = answer["decision"]["branch"]
        if not seen or seen[-1] != branch:
            seen.append(branch)
        offered = answer["decision"].get("recommended") or []
        return (branch, offered[0]) if offered and not offered[0]["needs_labels"] else None

    try:
        branch, action = wait_for(
            recommended,
            timeout=TRIAGE_S,
            every=3,
            what=f"{slug}: triage of #{iid} to recommend an action",
        )
    finally:
        record["branches_seen"] = seen
    mark("triaged")
    record.update(branch=branch, kind=action["kind"], params=action["params"])
    body = {"kind": action["kind"], "params": action["params"],
            "idempotency_key": f"realspeed-{uuid.uuid4()}"}  # fmt: skip
    run = wait_for(
        lambda: steps.request_fix(stack, iid, body, record),
        timeout=RUN_S,
        every=2,
        what=f"{slug}: the {action['kind']} request to be accepted",
    )
    record["run"] = run["id"]
    stack["monitor"].fixes[run["id"]] = slug
    mark("requested")
    if run["status"] == "awaiting_approval":
        r = steps.api(stack["approver"], "POST", f"{base}/api/v1/actions/{run['id']}/approve/",
                      json={"note": "realspeed: second commander"})  # fmt: skip
        assert r.status_code == 200, f"{slug}: approving #{run['id']}: {r.text[:1000]}"
        record["approved_by"] = "commander"
    done = wait_for(
        lambda: (lambda x: x if x["status"] in ("succeeded", "failed", "rejected",
                                                "cancelled") else None)(
            steps.run_state(stack, run["id"])),
        timeout=RUN_S, every=2, what=f"{slug}: fix #{run['id']} {action['kind']} to finish",
    )  # fmt: skip
    assert done["status"] == "succeeded", (
        f"{slug}: fix {fix_text(done)} ended {done['status']}: {done.get('error')}"
    )
    record["target"] = done["target"]
    mark("fixed")

    # Recover: the simulator says the fix is in place; the alert resolves; mitigated.
    def recovered():
        status = simulator(stack["sim_url"], "status", "--json")
        return all(s["fixed"] for s in status["active_scenarios"] if s["slug"] == slug)

    wait_for(recovered, timeout=RECOVER_S, every=3,
             what=f"{slug}: the simulator to call it fixed after {fix_text(done)}")  # fmt: skip
    mark("recovered")
    wait_for(
        lambda: steps.incident(stack, iid)["status"] == "mitigated",
        timeout=MITIGATED_S,
        every=2,
        what=f"{slug}: incident #{iid} to be mitigated (its alert resolved)",
    )
    mark("mitigated")
    wait_for(
        lambda: steps.resolve_when_mitigated(stack, iid, f"realspeed: {slug} fixed"),
        timeout=MITIGATED_S,
        every=2,
        what=f"{slug}: incident #{iid} to be resolved",
    )
    mark("resolved")
    record["unrelated_open"] = open_at_start and steps.is_open(stack, unrelated)
    if record["unrelated_open"]:
        RESULTS["unrelated_open_during"].append(slug)

    # The failure ends (not a reset: only this scenario's own fault is stopped).
    record["cleared"] = slug not in NOT_CLEARED
    if record["cleared"]:
        simulator(stack["sim_url"], "clear", slug)
    if slug == UNRELATED_DURING[-1]:
        _end_unrelated(stack)

    # What else opened meanwhile must end too, and is resolved like any incident.
    leftovers: dict[int, str] = {}

    def settled():
        left = [i for i in steps.open_incidents(stack, RESULTS["first_id"])
                if i["id"] != RESULTS.get("unrelated")]  # fmt: skip
        for i in left:
            leftovers[i["id"]] = i["title"]
            steps.resolve_when_mitigated(stack, i["id"], f"realspeed: ended with {slug}")
        return not left

    try:
        wait_for(settled, timeout=LEFTOVER_S, every=3, what=f"{slug}: every other incident "
                 "opened so far to end and be resolved")  # fmt: skip
    finally:
        record["other_incidents"] = leftovers
    mark("settled")

    # The guard so far on this fix: no breach, no undo.
    run_now = steps.run_state(stack, run["id"])
    record["guard_at_settled"] = guard_text(run_now.get("guard"))
    undos = [r for r in all_runs(stack) if r.get("undo_of") == run["id"]]
    said = f"{slug}: the guard judged the fix {fix_text(run_now)} a regression: "
    assert (run_now.get("guard") or {}).get("verdict") != "breached", (
        said + record["guard_at_settled"]
    )
    assert not undos, said + f"undone by {[fix_text(u) for u in undos]}"


def test_guard_left_every_fix_alone(stack):
    """After all eight: every fix's guard window ends (the runbooks' 10 minutes), none
    breached, no run undoes one, the guard requested nothing, and the unrelated incident
    was open during at least two scenarios."""
    stack["monitor"].current = "after all eight"
    fixes = stack["monitor"].fixes
    assert fixes, "no scenario got as far as a fix"

    def windows_over():
        runs = {r["id"]: r for r in all_runs(stack)}
        return all((runs[f].get("guard") or {}).get("verdict") != "watching" for f in fixes)

    try:
        wait_for(windows_over, timeout=900, every=10, what="every fix's guard window to end")
    finally:
        runs = {r["id"]: r for r in all_runs(stack)}
        for rid, slug in fixes.items():
            RESULTS["scenarios"][slug]["guard_final"] = guard_text(runs[rid].get("guard"))
            RESULTS["scenarios"][slug]["guard_verdict"] = (runs[rid].get("guard") or {}).get(
                "verdict"
            )
        ids = [i["id"] for i in incidents(stack) if i["id"] > RESULTS["first_id"]]
        RESULTS["findings"] = problems = findings(stack, fixes, ids)
        _save(stack)
    summary = "\n".join(
        f"  {slug}: {r.get('kind')} #{r.get('run')} times={r.get('times')} "
        f"guard={r.get('guard_final')}" + (f" ERROR: {r['error'][:300]}" if "error" in r else "")
        for slug, r in RESULTS["scenarios"].items()
    )
    print("realspeed summary:\n" + summary, flush=True)
    missing = [s for s in SCENARIOS if s not in fixes.values()]
    assert not problems, "guard findings:\n  " + "\n  ".join(problems) + f"\n{summary}"
    assert not missing, f"scenarios never fixed: {missing}\n{summary}"
    assert len(RESULTS.get("unrelated_open_during", [])) >= 2, RESULTS.get("unrelated_open_during")
