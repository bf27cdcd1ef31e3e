"""Live triage against the real loop as `make run` starts it: simulator -> Prometheus ->
Alertmanager -> console, every port free.

Inject `prefix-cache-drop` and `nccl-hang`, wait for their incidents, then ask
GET /api/v1/incidents/{id}/triage/ and check the branch the runbook documents, with
numbers from the real Prometheus. Then freeze Prometheus (SIGSTOP, so it accepts
connections and never answers) and check triage says so instead of failing.
"""

import os
import shutil
import signal
import subprocess
import time

import pytest
import yaml

from runbooks.catalog import DEFAULT_DIR
from tests.conftest import need_service
from tests.helpers import wait_for
from tests.integration.test_alert_loop import fast_rules, simulator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]
SLUGS = ("prefix-cache-drop", "nccl-hang")
# The branch each injected failure must land in, as the catalogue names it.
# The simulator exports DCGM NVLink CRC errors for the hung group's node, so nccl-hang
# lands in the NVLink branch (the runbook's root cause), not the generic hang.
EXPECTED = {"prefix-cache-drop": {"routing"}, "nccl-hang": {"hang_nvlink"}}


def branch_ids(slug: str) -> set[str]:
    doc = yaml.safe_load((DEFAULT_DIR / f"{slug}.yaml").read_text())
    return {b["id"] for b in doc["decision_tree"]}


def new_incidents(session, base: str, before: set[int]) -> dict[str, dict]:
    data = session.get(base + "/api/v1/incidents/", timeout=5).json()
    found: dict[str, dict] = {}
    for i in data["results"]:
        if i["runbook"] in SLUGS and i["id"] not in before:
            found.setdefault(i["runbook"], i)
    return found


def triage(session, base: str, incident_id: int) -> dict:
    r = session.get(f"{base}/api/v1/incidents/{incident_id}/triage/", timeout=30)
    assert r.status_code == 200, r.text[:500]
    return r.json()


def prometheus_pid(port: str) -> int:
    out = subprocess.run(
        ["pgrep", "-f", f"web.listen-address=127.0.0.1:{port}"],
        capture_output=True, text=True, timeout=5, check=False,
    )  # fmt: skip
    pids = [int(p) for p in out.stdout.split() if int(p) != os.getpid()]
    assert len(pids) == 1, f"expected one Prometheus on :{port}, found {pids}"
    return pids[0]


def test_triage_of_injected_failures_and_with_prometheus_frozen(make_run, tmp_path):
    for name in ("prometheus", "prometheus-alertmanager"):
        need_service(name, shutil.which(name) is not None, "apt-get install " + name)
    for slug, expected in EXPECTED.items():
        assert expected <= branch_ids(slug), f"{slug}: catalogue branches changed"
    stack = make_run({"PROMETHEUS_RULES_DIR": str(fast_rules(tmp_path / "rules")),
                      "SIMULATOR_STARTUP_DELAY": "5", "SIMULATOR_SPEED": "2",
                      "TRIAGE_CACHE_SECONDS": "2"})  # fmt: skip
    base = stack["base"]
    session = stack["login"]()
    before = {i["id"] for i in session.get(base + "/api/v1/incidents/", timeout=5)
              .json()["results"]}  # fmt: skip
    for slug in SLUGS:
        simulator(stack["sim_url"], "inject", slug)
    found = wait_for(
        lambda: (lambda got: got if set(got) == set(SLUGS) else None)(
            new_incidents(session, base, before)
        ),
        timeout=180, every=2, what=f"incidents for {SLUGS}",
    )  # fmt: skip

    # The metrics keep moving after the alert fired; wait for the documented branch.
    answers = {}
    for slug in SLUGS:
        answers[slug] = wait_for(
            lambda slug=slug: (lambda t: t if t["decision"]["branch"] in EXPECTED[slug] else None)(
                triage(session, base, found[slug]["id"])
            ),
            timeout=60, every=3, what=f"triage of {slug} to reach {EXPECTED[slug]}",
        )  # fmt: skip
    for slug, t in answers.items():
        print(
            slug, t["decision"]["branch"], [(c["id"], c["state"], c["value"]) for c in t["checks"]]
        )
        assert t["runbook"] == slug
        assert t["prometheus"] == {"url": stack["prom_url"], "error": "", "error_i18n": None}
        states = {c["id"]: c for c in t["checks"]}
        assert not [c for c in t["checks"] if c["state"] == "error"], t["checks"]
        assert t["decision"]["because"], t["decision"]
        for because in t["decision"]["because"]:
            check = states[because["check"]]
            assert isinstance(check["value"], int | float), check
            assert check["state"] == because["state"]

    # The postmortem stores the golden signals from this Prometheus, so its charts
    # survive retention: mitigate the incident, draft, and read the snapshots back.
    nccl = found["nccl-hang"]["id"]
    # Its alert still fires (no fix was applied): mitigating it is confirmed, with a reason.
    assert session.post(f"{base}/api/v1/incidents/{nccl}/mitigate/",
                        json={"confirm": True, "reason": "drafting the postmortem"},
                        headers={"X-CSRFToken": session.cookies["csrftoken"]},
                        timeout=10).status_code == 200  # fmt: skip
    r = session.post(f"{base}/api/v1/incidents/{nccl}/postmortem/", json={},
                     headers={"X-CSRFToken": session.cookies["csrftoken"]}, timeout=60)  # fmt: skip
    assert r.status_code == 201, r.text[:500]
    pm = r.json()
    assert pm["draft_state"] == "ready", pm
    snapshots = {s["chart_id"]: s for s in pm["snapshots"]}
    assert snapshots, "the runbook names golden signals"
    with_data = [s for s in snapshots.values() if any(x["y"] for x in s["series"])]
    assert with_data, [(s["chart_id"], s["error"]) for s in snapshots.values()]
    assert all(s["promql"] and s["step_seconds"] > 0 for s in snapshots.values())

    # Prometheus frozen: it accepts connections and never answers.
    pid = prometheus_pid(stack["prom_url"].rsplit(":", 1)[1])
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(3)  # past TRIAGE_CACHE_SECONDS, so the answers above are stale
        t = triage(session, base, found["nccl-hang"]["id"])
    finally:
        os.kill(pid, signal.SIGCONT)
    assert "did not answer in" in t["prometheus"]["error"], t["prometheus"]
    assert {c["state"] for c in t["checks"]} <= {"error", "needs_label"}
    assert "error" in {c["state"] for c in t["checks"]}
