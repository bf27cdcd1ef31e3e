"""One real stack for the whole drill module, in compressed time (tests/drill_stack.py)."""

import pytest

from tests.drill_stack import compressed_stack

# Windows for the compressed loop (x4): 1-2 minutes of rate -> 16 s (8 scrapes);
# 5-15 minutes of history -> 1-2 minutes; "yesterday" stays out of reach, so ttft-spike
# cannot tell whether traffic grew (its capacity_unconfirmed branch).
WINDOWS = {"1m": "16s", "2m": "16s", "5m": "1m", "10m": "2m", "15m": "2m"}


@pytest.fixture(scope="module")
def drill_stack(tmp_path_factory):
    with compressed_stack(tmp_path_factory, windows=WINDOWS) as stack:
        yield stack
