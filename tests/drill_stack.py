"""One real stack in compressed time, and what the drill and branch suites ask of it.

`make run` as a user starts it (simulator, Prometheus, Alertmanager, web, worker), with:
- the simulator at SPEED simulated seconds per second and a short group start-up;
- Prometheus scraping and evaluating every 2 s, Alertmanager grouping within 1-2 s;
- a test-only copy of the production rules with short windows and `for:` (generated
  from deploy/prometheus/rules on every run, so the real expressions are what fires),
  and a copy of the runbook catalogue whose triage queries look back as far in
  compressed time (RUNBOOKS_CATALOG_DIR).
Every wait polls with a deadline; nothing sleeps for a fixed time.
"""

import contextlib
import json
import shutil
import subprocess
import sys

from tests.conftest import need_service
from tests.helpers import wait_for
from tests.prom_rules import fast_catalog, fast_rules
from tests.run_stack import ROOT, start_run, stop_runs

SPEED = 4
LOOP_ENV = {
    "SIMULATOR_SPEED": str(SPEED),
    "SIMULATOR_STARTUP_DELAY": "8",  # simulated seconds: 2 s of wall time
    "PROMETHEUS_SCRAPE_INTERVAL": "2s",
    "PROMETHEUS_EVALUATION_INTERVAL": "2s",
    "ALERTMANAGER_GROUP_WAIT": "1s",
    "ALERTMANAGER_GROUP_INTERVAL": "2s",
    "TRIAGE_CACHE_SECONDS": "1",
    # Guarded changes watch a fix for the runbook's window (10 min) of real time; the
    # drills reset the fleet and inject the next failure long before that, which the
    # guard would take for the fix's regression. Compressed, the window ends before the
    # fleet has recovered, and so before the next drill starts.
    "GUARD_WINDOW_SECONDS": "10",
    "GUARD_INTERVAL_SECONDS": "2",
    "GUARD_SETTLE_SECONDS": "4",
}


@contextlib.contextmanager
def compressed_stack(tmp_path_factory, *, windows: dict[str, str], day: str = ""):
    for name in ("prometheus", "prometheus-alertmanager"):
        need_service(name, shutil.which(name) is not None, "apt-get install " + name)
    tmp = tmp_path_factory.mktemp("stack")
    rules = fast_rules(tmp / "rules", windows=windows, for_="6s")
    catalog = fast_catalog(tmp / "catalog", windows=windows, day=day)
    procs: list = []
    try:
        stack = start_run(
            tmp,
            procs,
            {"PROMETHEUS_RULES_DIR": str(rules), "RUNBOOKS_CATALOG_DIR": str(catalog), **LOOP_ENV},
        )
        stack["session"] = stack["login"]()
        stack["approver"] = stack["login_approver"]()
        yield stack
    finally:
        stop_runs(procs)


def simulator(url: str, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "simulator", *args, "--url", url],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def api(session, method: str, url: str, **kwargs):
    headers = {"X-CSRFToken": session.cookies.get("csrftoken", "")}
    return session.request(method, url, headers=headers, timeout=30, **kwargs)


def firing_alerts(stack) -> list[dict]:
    """The fleet's alerts firing or pending; not the always-firing Watchdog, which is the
    replica's heartbeat (the pager), never an incident."""
    import requests
    from django.conf import settings

    data = requests.get(stack["prom_url"] + "/api/v1/alerts", timeout=5).json()
    return [
        a
        for a in data["data"]["alerts"]
        if a["state"] in ("firing", "pending")
        and a["labels"].get("alertname") not in settings.HEARTBEAT_ALERTNAMES
    ]


def incidents(stack, query: str = "") -> list[dict]:
    r = api(stack["session"], "GET", stack["base"] + "/api/v1/incidents/" + query)
    return r.json()["results"]


def newest_incident_id(stack) -> int:
    return max((i["id"] for i in incidents(stack)), default=0)


def new_incidents(stack, after: int, slug: str = "") -> list[dict]:
    return [i for i in incidents(stack, f"?runbook={slug}" if slug else "") if i["id"] > after]


def triage(stack, iid: int) -> dict:
    return api(stack["session"], "GET", f"{stack['base']}/api/v1/incidents/{iid}/triage/").json()


def active_runs(stack) -> list[dict]:
    r = api(stack["session"], "GET", stack["base"] + "/api/v1/actions/")
    return [a for a in r.json()["results"] if a["active"]]


def settle_runs(stack) -> list[str]:
    """Runs still waiting from the drill before (e.g. an automatic undo a guarded change
    requested) would make the next fix "busy": they were about a fleet that the reset
    replaced, so a commander rejects them; queued and running ones are let finish."""
    left = []
    for run in active_runs(stack):
        left.append(f"#{run['id']} {run['kind']} {run['status']} by {run['requested_by']}")
        if run["status"] == "awaiting_approval":
            url = f"{stack['base']}/api/v1/actions/{run['id']}/reject/"
            api(stack["approver"], "POST", url, json={"note": "drill: fleet reset to baseline"})
    wait_for(lambda: not active_runs(stack), timeout=60, every=1,
             what="no action run active before the next drill")  # fmt: skip
    return left


def wait_branch(stack, iid: int, want: str, *, timeout: float, actions: bool = False) -> dict:
    """Poll the incident's triage until it picks `want` (with a recommended action, if
    `actions`); the failure message lists the branches seen on the way."""
    seen: list[str] = []
    last: dict = {}

    def reached():
        answer = last["answer"] = triage(stack, iid)
        branch = answer["decision"]["branch"]
        if not seen or seen[-1] != branch:
            seen.append(branch)
        return answer if branch == want and (answer["decision"]["recommended_actions"]
                                             or not actions) else None  # fmt: skip

    try:
        return wait_for(reached, timeout=timeout, every=1, what=f"triage of #{iid} -> {want}")
    except AssertionError as exc:
        checks = {c["id"]: (c["state"], c["value"]) for c in last["answer"].get("checks", [])}
        raise AssertionError(f"{exc}; branches seen: {seen}; last checks: {checks}") from None
