"""What the zh-Hans walk seeds on a stack `make run` started (the demo history comes with
it): one live incident of each of the eight runbooks, each acknowledged, with a note, a
silence and an action run (the triage's recommended action, approved by a second person
where needed) whose guard watch then runs; a readiness verification of every deployment;
one drill, drafted postmortems. Everything goes through the API as the demo's admin and
commander; the failures are injected with `python -m simulator inject`.

Order matters, all eight failures being on one pool (llm-serving/vllm-chat):
- the drill (prefix-cache-drop) starts first and its incident opens before the others are
  injected: a drill takes the first incident its target opens. Its plan does not stop on
  a real SEV1 (the others open some). One drill: a target runs one at a time.
- its fix runs first, so its incident recovers and the drill is scored; it is silenced
  last (a silenced alert sends no resolved notice: the drill would never end);
- garbage-output is injected after that fix: both fixes roll the router config back to
  "before the incident", and one rollback would otherwise leave the other nothing to do.
Every wait polls with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field

from tests.helpers import wait_for
from tests.run_stack import ROOT

RUNBOOKS = (
    "ttft-spike", "nccl-hang", "prefix-cache-drop", "retry-storm", "garbage-output",
    "ecc-errors", "cuda-graph-capture", "long-context-kv",
)  # fmt: skip
DRILLED = "prefix-cache-drop"  # its alert fires within seconds and its fix is one change
# Its fix also rolls the router config back: injected once the drill's fix rolled it back,
# so that its "config from before the incident" differs from the current one.
LATE = "garbage-output"
NAMESPACE, LWS = "llm-serving", "vllm-chat"  # the simulator's drill-labelled pool
WAIT = 150


@dataclass
class Seeded:
    incidents: dict[str, int] = field(default_factory=dict)  # runbook -> incident id
    runs: dict[str, dict] = field(default_factory=dict)  # runbook -> its run as last read
    silences: dict[str, str] = field(default_factory=dict)  # runbook -> silence id
    postmortems: dict[str, int] = field(default_factory=dict)  # runbook -> its draft
    deployments: list[int] = field(default_factory=list)
    verifications: list[int] = field(default_factory=list)
    drill_plan: int = 0
    drill_run: int = 0
    drill_incident: int = 0
    log: list[str] = field(default_factory=list)  # what was done, for the report

    def say(self, line: str) -> None:
        self.log.append(line)
        print(line)


def api(session, method: str, url: str, **kwargs):
    headers = {"X-CSRFToken": session.cookies.get("csrftoken", ""), **kwargs.pop("headers", {})}
    return session.request(method, url, headers=headers, timeout=30, **kwargs)


def ok(response, *codes: int) -> dict:
    assert response.status_code in (codes or (200,)), (
        response.request.method, response.url, response.status_code, response.text[:800],
    )  # fmt: skip
    return response.json()


def simulator(url: str, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "simulator", *args, "--url", url],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip


def seed(stack: dict) -> Seeded:
    base, admin, commander = stack["base"], stack["login"](), stack["login_approver"]()
    out = Seeded()
    before = max((i["id"] for i in _incidents(admin, base)), default=0)
    _drill_start(admin, base, out)
    _deployments_verify(admin, base, out)
    # The drill takes the first incident its target opens: the other failures (on the
    # same pool) are injected once the drill's own has opened.
    _opened(admin, base, before, out, [DRILLED])
    first = [s for s in RUNBOOKS if s not in (DRILLED, LATE)]
    for slug in first:
        simulator(stack["sim_url"], "inject", slug)
    out.say(f"injected {', '.join(first)} with the simulator")
    _opened(admin, base, before, out, first)
    # The drill's fix first, so its incident recovers and the drill is scored; it also
    # rolls the router config back before LATE changes it.
    drilled = next((s for s, i in out.incidents.items() if i == out.drill_incident), DRILLED)
    for slug in dict.fromkeys([drilled, DRILLED]):
        _fix(stack, admin, commander, slug, out.incidents[slug], out)
    simulator(stack["sim_url"], "inject", LATE)
    out.say(f"injected {LATE} with the simulator")
    for slug in first:
        if slug not in out.runs:
            _fix(stack, admin, commander, slug, out.incidents[slug], out)
    _opened(admin, base, before, out, [LATE])
    _fix(stack, admin, commander, LATE, out.incidents[LATE], out)
    _drill_wait(admin, base, out)
    _silence(admin, base, drilled, out.drill_incident, out)
    for slug, iid in out.incidents.items():  # the drafter words what the console recorded
        r = api(admin, "POST", f"{base}/api/v1/incidents/{iid}/postmortem/",
                json={"language": "zh-hans"})  # fmt: skip
        if r.status_code in (200, 201):
            out.postmortems[slug] = r.json()["id"]
    out.say(f"postmortems drafted: {out.postmortems}")
    wait_for(lambda: _verifications_done(admin, base, out), timeout=60, every=1,
             what="the readiness verifications to finish")  # fmt: skip
    return out


def _opened(admin, base: str, before: int, out: Seeded, slugs: list[str]) -> None:
    """Wait for an incident of each of `slugs`, then acknowledge it, add a note, mark a
    runbook step done, confirm the diagnosis and (but the drill's: a silenced alert sends
    no resolved notice, and the drill would not end) silence it."""

    def opened() -> bool:
        for i in _incidents(admin, base):
            if i["id"] > before and i["runbook"] in slugs:
                out.incidents.setdefault(i["runbook"], i["id"])
        return set(slugs) <= set(out.incidents)

    wait_for(opened, timeout=WAIT, every=1,
             what=f"an incident of each of {slugs} (have {sorted(out.incidents)})")  # fmt: skip
    out.say(f"incidents: { {s: out.incidents[s] for s in slugs} }")
    if not out.drill_incident:

        def drill_incident() -> int | None:
            return ok(api(admin, "GET", f"{base}/api/v1/drills/runs/{out.drill_run}/"))["incident"]

        out.drill_incident = wait_for(drill_incident, timeout=WAIT, every=1,
                                      what="the drill's incident")  # fmt: skip
        out.say(f"the drill's incident: #{out.drill_incident}")
    for slug in slugs:
        iid = out.incidents[slug]
        ok(api(admin, "POST", f"{base}/api/v1/incidents/{iid}/acknowledge/", json={}), 200, 409)
        ok(api(admin, "POST", f"{base}/api/v1/incidents/{iid}/notes/",
               json={"text": "走查：已确认影响范围"}), 200, 201)  # fmt: skip
        # The page's buttons (no API): a runbook step done, the diagnosis confirmed (the
        # drill's scorecard asks for it).
        for part in ("steps/symptom/", "diagnosis/"):
            r = api(admin, "POST", f"{base}/runbooks/incidents/{iid}/{part}",
                    allow_redirects=False)  # fmt: skip
            assert r.status_code < 400, (part, r.status_code, r.text[:500])
        if iid != out.drill_incident:
            _silence(admin, base, slug, iid, out)


def _incidents(session, base: str) -> list[dict]:
    return ok(api(session, "GET", f"{base}/api/v1/incidents/?page_size=200"))["results"]


def _drill_start(admin, base: str, out: Seeded) -> None:
    plan = ok(api(admin, "POST", f"{base}/api/v1/drills/plans/", json={
        "runbook": DRILLED, "namespace": NAMESPACE, "lws": LWS, "fault": DRILLED,
        # The other seven failures open real SEV1s on the same pool meanwhile.
        "stop_on_real_sev1": False, "max_duration_seconds": 900,
    }), 201)  # fmt: skip
    run = ok(api(admin, "POST", f"{base}/api/v1/drills/plans/{plan['id']}/start/"), 201)
    out.drill_plan, out.drill_run = plan["id"], run["id"]
    out.say(f"drill plan #{plan['id']} ({DRILLED} on {NAMESPACE}/{LWS}) started: run #{run['id']}")


def _deployments_verify(admin, base: str, out: Seeded) -> None:
    rows = ok(api(admin, "GET", f"{base}/api/v1/readiness/deployments/"))
    rows = rows["results"] if isinstance(rows, dict) else rows
    for row in rows:
        answer = ok(api(admin, "POST", f"{base}/api/v1/readiness/deployments/{row['id']}/verify/"),
                    200, 202)  # fmt: skip
        out.deployments.append(row["id"])
        if answer.get("id"):
            out.verifications.append(answer["id"])
    out.say(f"readiness verification queued for deployments {out.deployments}")


def _verifications_done(admin, base: str, out: Seeded) -> bool:
    for vid in out.verifications:
        found = ok(api(admin, "GET", f"{base}/api/v1/readiness/verifications/{vid}/"))
        if found.get("status") in ("queued", "running"):
            return False
    return True


def _silence(admin, base: str, slug: str, iid: int, out: Seeded) -> None:
    r = api(admin, "POST", f"{base}/api/v1/incidents/{iid}/silences/",
            json={"duration_minutes": 30, "comment": "走查：静默该组告警"})  # fmt: skip
    made = ok(r, 201)
    out.silences[slug] = made[0].get("id", "")


def _recommended(admin, base: str, iid: int) -> list[dict]:
    triage = ok(api(admin, "GET", f"{base}/api/v1/incidents/{iid}/triage/"))
    recommended = (triage.get("decision") or {}).get("recommended") or []
    return [a for a in recommended if not a.get("needs_labels")]


def _runbook_actions(admin, base: str, slug: str, iid: int) -> list[dict]:
    """The runbook's emergency actions, their parameters filled from the incident's alert
    as the page's buttons fill them: for an incident whose branch recommends nothing (a
    related incident, whose lead's fix is the one triage offers, or one an earlier fix
    already relieved), or whose recommended fix has nothing left to do."""
    from runbooks.catalog import load_catalog
    from runbooks.placeholders import fill_params

    labels = ok(api(admin, "GET", f"{base}/api/v1/incidents/{iid}/"))["alerts"][0]["labels"]
    return [{"kind": a.kind, "params": fill_params(dict(a.params), labels)}
            for a in load_catalog().get(slug).emergency_actions]  # fmt: skip


def _fix(stack: dict, admin, commander, slug: str, iid: int, out: Seeded) -> None:
    """Request the triage's recommended action (once triage offers one; else the
    runbook's), approve it as the second person where needed, and wait for it to end. A
    run still active on the pool (the previous fix's) makes the request "busy": asked
    again until accepted; one refused as pointless (a config already rolled back by
    another incident's fix) gives way to the runbook's next action."""
    base = stack["base"]
    try:
        actions = wait_for(lambda: _recommended(admin, base, iid), timeout=10, every=1,
                           what=f"a recommended action for #{iid} ({slug})")  # fmt: skip
    except AssertionError:
        actions = []
    refused: list[str] = []
    for action in [*actions, *_runbook_actions(admin, base, slug, iid)]:
        body = {"kind": action["kind"], "params": action["params"],
                "idempotency_key": f"walk-{uuid.uuid4()}"}  # fmt: skip

        def requested(body=body) -> dict | None:
            r = api(admin, "POST", f"{base}/api/v1/incidents/{iid}/actions/", json=body)
            if r.status_code in (200, 201):
                return r.json()
            if r.status_code == 409 and r.json().get("code") == "busy":
                _reject_automatic(commander, admin, base, stack["user"])
                return None
            return {"refused": f"{body['kind']}: {r.status_code} {r.text[:300]}"}

        run = wait_for(requested, timeout=90, every=1, what=f"the {body['kind']} run of #{iid}")
        if "refused" not in run:
            break
        refused.append(run["refused"])
    assert "refused" not in run, f"every action of #{iid} ({slug}) was refused: {refused}"
    if run.get("requires_approval") and run.get("status") == "awaiting_approval":
        ok(api(commander, "POST", f"{base}/api/v1/actions/{run['id']}/approve/",
               json={"note": "走查：同意执行"}))  # fmt: skip

    def ended() -> dict | None:
        found = ok(api(admin, "GET", f"{base}/api/v1/actions/{run['id']}/"))
        return found if found["status"] in ("succeeded", "failed", "rejected") else None

    out.runs[slug] = wait_for(ended, timeout=90, every=1, what=f"run #{run['id']} to end")
    out.say(f"#{iid} {slug}: {run['kind']} run #{run['id']} {out.runs[slug]['status']}")


def _reject_automatic(commander, admin, base: str, user: str) -> None:
    """A guard's automatic rollback awaiting approval holds the pool: a commander rejects
    it so the next incident's fix can run (as the drill suite does)."""
    runs = ok(api(admin, "GET", f"{base}/api/v1/actions/?status=awaiting_approval"))["results"]
    for run in runs:
        if run["requested_by"] != user:
            api(commander, "POST", f"{base}/api/v1/actions/{run['id']}/reject/",
                json={"note": "走查：先执行运行手册的修复"})  # fmt: skip


def _drill_wait(admin, base: str, out: Seeded, timeout: float = 90) -> None:
    """Give the drill the time its incident needs to be mitigated (then it is scored);
    an unscored drill is walked as it stands."""
    deadline = time.monotonic() + timeout
    run: dict = {}
    while time.monotonic() < deadline:
        run = ok(api(admin, "GET", f"{base}/api/v1/drills/runs/{out.drill_run}/"))
        if run["status"] not in ("starting", "running", "stopping"):
            break
        time.sleep(1)
    out.say(f"drill run #{out.drill_run}: {run.get('status')} {run.get('outcome') or ''}")
