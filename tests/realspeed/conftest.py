"""One `make run` stack at real speed for the whole real-speed suite (tests/realspeed).

Not part of `make test`: it takes 40-60 minutes. It is collected only when asked for,
with `make realspeed` (REALSPEED=1) or `pytest -m realspeed`.

Nothing is compressed: the simulator runs at speed 1, Prometheus loads the production
rules (deploy/prometheus/rules), triage reads the real runbook catalogue, the guard keeps
each runbook's own window, and Prometheus and Alertmanager keep `make run`'s own timings
(console/localstack/monitoring.py: scrape and evaluate every 5 s, group_wait 5 s).
"""

import os
import re
import shutil

import pytest

from tests.conftest import need_service
from tests.realspeed.guardwatch import GuardMonitor
from tests.run_stack import start_run, stop_runs

# What the compressed suites (tests/drill_stack.py) or a developer's shell may set; the
# stack must not inherit any of it, so that it runs exactly as `make run` does.
NOT_REAL_SPEED = (
    "SIMULATOR_SPEED",
    "SIMULATOR_STARTUP_DELAY",
    "PROMETHEUS_SCRAPE_INTERVAL",
    "PROMETHEUS_EVALUATION_INTERVAL",
    "ALERTMANAGER_GROUP_WAIT",
    "ALERTMANAGER_GROUP_INTERVAL",
    "PROMETHEUS_RULES_DIR",
    "RUNBOOKS_CATALOG_DIR",
    "TRIAGE_CACHE_SECONDS",
    "GUARD_WINDOW_SECONDS",
    "GUARD_INTERVAL_SECONDS",
    "GUARD_CONFIRM_CHECKS",
)


def _asked_for(config) -> bool:
    markexpr = config.getoption("markexpr", default="") or ""
    return os.environ.get("REALSPEED") == "1" or bool(
        re.search(r"(?<!not )\brealspeed\b", markexpr)
    )


def pytest_ignore_collect(collection_path, config):
    # `make test` collects everything under tests/: leave this suite out unless asked.
    if collection_path.name.startswith("test_") and not _asked_for(config):
        return True
    return None


@pytest.fixture(scope="module")
def real_stack(tmp_path_factory):
    for name in ("prometheus", "prometheus-alertmanager"):
        need_service(name, shutil.which(name) is not None, "apt-get install " + name)
    tmp = tmp_path_factory.mktemp("realspeed")
    procs: list = []
    monitor = None
    with pytest.MonkeyPatch.context() as mp:
        for name in NOT_REAL_SPEED:
            mp.delenv(name, raising=False)
        try:
            stack = start_run(tmp, procs)
            stack["session"] = stack["login"]()
            stack["approver"] = stack["login_approver"]()
            stack["tmp"] = tmp
            monitor = stack["monitor"] = GuardMonitor(stack)
            monitor.start()
            yield stack
        finally:
            if monitor is not None:
                monitor.stop()
            stop_runs(procs)
