"""One real stack for the branch suite, in compressed time (tests/drill_stack.py).

Shorter history windows than the drill suite's, so branches that need errors to age out
(ecc_history, xid_only, no_evidence) are reached within a minute, and "yesterday" is one
simulated day ago (`offset 1d` -> DAY), so ttft-spike can tell a traffic jump (capacity)
from lost capacity (capacity_lost) once the stack has run that long.
"""

import pytest

from simulator.fleet import DAY_S
from tests.drill_stack import SPEED, compressed_stack

WINDOWS = {"1m": "16s", "2m": "16s", "5m": "30s", "10m": "40s", "15m": "2m"}
DAY = f"{round(DAY_S / SPEED)}s"


@pytest.fixture(scope="module")
def branch_stack(tmp_path_factory):
    with compressed_stack(tmp_path_factory, windows=WINDOWS, day=DAY) as stack:
        yield stack
