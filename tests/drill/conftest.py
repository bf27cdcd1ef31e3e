"""One real stack for the whole drill module, in compressed time.

`make run` as a user starts it (simulator, Prometheus, Alertmanager, web, worker), with:
- the simulator at SPEED simulated seconds per second and a short group start-up;
- Prometheus scraping and evaluating every 2 s, Alertmanager grouping within 1-2 s;
- a test-only copy of the production rules with short windows and `for:` (generated
  from deploy/prometheus/rules on every run, so the real expressions are what fires),
  and a copy of the runbook catalogue whose triage queries look back as far in
  compressed time (RUNBOOKS_CATALOG_DIR).
"""

import shutil

import pytest

from tests.conftest import need_service
from tests.prom_rules import fast_catalog, fast_rules
from tests.run_stack import start_run, stop_runs

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
}
# Windows for the compressed loop (x4): 1-2 minutes of rate -> 16 s (8 scrapes);
# 5-15 minutes of history -> 1-2 minutes; "yesterday" stays out of reach.
WINDOWS = {"1m": "16s", "2m": "16s", "5m": "1m", "10m": "2m", "15m": "2m"}


@pytest.fixture(scope="module")
def drill_stack(tmp_path_factory):
    for name in ("prometheus", "prometheus-alertmanager"):
        need_service(name, shutil.which(name) is not None, "apt-get install " + name)
    tmp = tmp_path_factory.mktemp("drill")
    rules = fast_rules(tmp / "rules", windows=WINDOWS, for_="6s")
    catalog = fast_catalog(tmp / "catalog", windows=WINDOWS)
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
