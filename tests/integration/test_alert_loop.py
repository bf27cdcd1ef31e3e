"""The whole loop as `make run` starts it, with the real programs on free ports:
simulator -> Prometheus -> Alertmanager -> console.

Inject `ttft-spike` and `nccl-hang`, wait for an incident with the right runbook for
each, clear them, wait for both to be mitigated. The rules are the production ones
with windows and `for:` shortened (a copy in tmp) so the test stays near two minutes.
"""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import need_service
from tests.helpers import wait_for
from tests.prom_rules import fast_rules

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]
ROOT = Path(__file__).resolve().parents[2]
SLUGS = ("ttft-spike", "nccl-hang")


def simulator(url: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "simulator", *args, "--url", url],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return out.stdout


def incidents(session, base: str, before: set[int]) -> dict[str, list[dict]]:
    """Incidents for SLUGS opened since `before` (the demo data has some too)."""
    data = session.get(base + "/api/v1/incidents/", timeout=5).json()
    found: dict[str, list[dict]] = {}
    for i in data["results"]:
        if i["runbook"] in SLUGS and i["id"] not in before:
            found.setdefault(i["runbook"], []).append(i)
    return found


def test_injected_failures_become_incidents_and_clear_to_mitigated(make_run, tmp_path):
    for name in ("prometheus", "prometheus-alertmanager"):
        need_service(name, shutil.which(name) is not None, "apt-get install " + name)
    stack = make_run({"PROMETHEUS_RULES_DIR": str(fast_rules(tmp_path / "rules")),
                      "SIMULATOR_STARTUP_DELAY": "5", "SIMULATOR_SPEED": "2"})  # fmt: skip
    session = stack["login"]()
    before = {i["id"] for i in session.get(stack["base"] + "/api/v1/incidents/", timeout=5)
              .json()["results"]}  # fmt: skip
    started = time.monotonic()
    for slug in SLUGS:
        simulator(stack["sim_url"], "inject", slug)

    found = wait_for(
        lambda: (lambda got: got if set(got) == set(SLUGS) else None)(
            incidents(session, stack["base"], before)
        ),
        timeout=180, every=2, what=f"incidents for {SLUGS}",
    )  # fmt: skip
    opened = time.monotonic() - started
    assert found["ttft-spike"][0]["title"].startswith("VLLMHighTTFT")
    assert found["nccl-hang"][0]["title"].startswith("VLLMEngineStalled")

    simulator(stack["sim_url"], "clear")
    wait_for(
        lambda: all(
            i["status"] == "mitigated"
            for group in incidents(session, stack["base"], before).values()
            for i in group
        ),
        timeout=180, every=2, what="both incidents to be mitigated",
    )  # fmt: skip
    print(f"incidents opened after {opened:.0f}s, mitigated after "
          f"{time.monotonic() - started:.0f}s")  # fmt: skip
