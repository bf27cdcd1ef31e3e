"""The steps a team takes in the real-speed suite, each through the console's REST API
(or Alertmanager's and the simulator's own APIs, for the world outside the console)."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

from tests.drill_stack import active_runs, api, incidents
from tests.realspeed.guardwatch import GUARD_USER
from tests.run_stack import ROOT

OPEN = ("triggered", "acknowledged")

# An alert about something else entirely: another namespace, no runbook of the eight,
# severity warning. Sent to Alertmanager (not straight to the webhook), so Alertmanager
# itself sees it firing for as long as it lasts.
UNRELATED = {
    "alertname": "BatchQueueBacklog",
    "namespace": "batch-jobs",
    "job": "batch-queue",
    "severity": "warning",
    "cluster": "local-demo",
}


def am_alert(stack, *, ends_in: timedelta) -> None:
    now = datetime.now(UTC)
    body = [{
        "labels": UNRELATED,
        "annotations": {"summary": "batch-jobs: 4200 jobs waiting for more than 30 min",
                        "description": "Unrelated to the vLLM fleet (realspeed suite)."},
        "startsAt": (now - timedelta(minutes=1)).isoformat(),
        "endsAt": (now + ends_in).isoformat(),
    }]  # fmt: skip
    r = requests.post(stack["am_url"] + "/api/v2/alerts", json=body, timeout=10)
    assert r.ok, f"Alertmanager refused the unrelated alert: {r.status_code} {r.text[:500]}"


def incident(stack, iid: int) -> dict:
    return api(stack["session"], "GET", f"{stack['base']}/api/v1/incidents/{iid}/").json()


def is_open(stack, iid: int | None) -> bool:
    return iid is not None and incident(stack, iid)["status"] in OPEN


def take_command(stack, iid: int) -> str | None:
    """Acknowledge as the responder, and take command if the acknowledgement did not
    make them the commander (issue 25 item 6): a team has someone in command."""
    base, session = stack["base"], stack["session"]
    api(session, "POST", f"{base}/api/v1/incidents/{iid}/acknowledge/")
    if incident(stack, iid).get("commander") is None:
        api(session, "POST", f"{base}/api/v1/incidents/{iid}/commander/",
            json={"commander": stack["user"]})  # fmt: skip
    return incident(stack, iid).get("commander")


def reject_guard_undos(stack, why: str) -> list[str]:
    """Guard undos waiting for approval hold their target ("busy"): the suite's fix is
    right, so a commander rejects them (each one is already a failure of the suite)."""
    rejected = []
    for run in active_runs(stack):
        if run["status"] == "awaiting_approval" and run["requested_by"] == GUARD_USER:
            url = f"{stack['base']}/api/v1/actions/{run['id']}/reject/"
            api(stack["approver"], "POST", url, json={"note": why})
            rejected.append(f"#{run['id']} {run['kind']} {run['params']} undo_of={run['undo_of']}")
    return rejected


def request_fix(stack, iid: int, body: dict, record: dict) -> dict | None:
    url = f"{stack['base']}/api/v1/incidents/{iid}/actions/"
    r = api(stack["session"], "POST", url, json=body)
    if r.status_code in (200, 201):
        return r.json()
    answer = r.json() if "json" in r.headers.get("content-type", "") else {}
    if r.status_code == 409 and answer.get("code") == "busy":
        record.setdefault("busy", []).append(answer.get("detail", r.text[:300]))
        rejected = reject_guard_undos(stack, f"realspeed: {record['slug']}'s fix goes first")
        record.setdefault("rejected_guard_undos", []).extend(rejected)
        return None
    raise AssertionError(
        f"{record['slug']}: the request of the recommended {body['kind']} {body['params']} "
        f"was refused: {r.status_code} {r.text[:1000]}"
    )


def run_state(stack, rid: int) -> dict:
    return api(stack["session"], "GET", f"{stack['base']}/api/v1/actions/{rid}/").json()


def resolve_when_mitigated(stack, iid: int, reason: str) -> bool:
    """Resolve once mitigated (its alerts ended); an alert firing again in between sends
    it back to triggered, and the wait goes on."""
    found = incident(stack, iid)
    if found["status"] != "mitigated":
        return False
    if found.get("commander") is None:
        # A SEV1/SEV2 resolved with nobody in command needs an explicit confirmation
        # (issue 25 item 6); a team takes command of what it resolves instead.
        api(stack["session"], "POST", f"{stack['base']}/api/v1/incidents/{iid}/commander/",
            json={"commander": stack["user"]})  # fmt: skip
    url = f"{stack['base']}/api/v1/incidents/{iid}/resolve/"
    r = api(stack["session"], "POST", url, json={"reason": reason})
    return r.status_code == 200


def open_incidents(stack, after: int) -> list[dict]:
    return [i for i in incidents(stack, "?status=open") if i["id"] > after]


def revision() -> str:
    if os.environ.get("REALSPEED_REVISION"):  # a copy of the tree with no .git
        return os.environ["REALSPEED_REVISION"]
    out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                         capture_output=True, text=True, check=False)  # fmt: skip
    return out.stdout.strip()


def write_results(stack, results: dict) -> list[Path]:
    """The last result: the stack's var dir, and REALSPEED_RESULT if set (`make realspeed`
    sets var/realspeed-last.json) for the README's figures."""
    text = json.dumps(results, indent=2, sort_keys=False, default=str)
    paths = [Path(stack["var"]) / "realspeed-last.json"]
    if os.environ.get("REALSPEED_RESULT"):
        paths.append(Path(os.environ["REALSPEED_RESULT"]))
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return paths
