"""Every series the catalogue's PromQL reads is one the simulator exports, except a few
that only real exporters have; those checks read "no data" against the simulator, and no
decision branch the scenarios land on depends on them."""

import re

from runbooks.catalog import load_catalog
from tests.unit.simulator.test_rules_contract import (
    NAME,
    PROMQL_WORDS,
    exposed_sample_names,
)

# dcgm-exporter fields the simulator does not model.
REAL_EXPORTERS_ONLY = {
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_XID_ERRORS",
}
MORE_WORDS = {"count_over_time", "stddev_over_time", "offset", "d", "h", "m", "s"}


def metric_names(promql: str) -> set[str]:
    expr = re.sub(r'"[^"]*"', '""', promql)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    expr = re.sub(r"\boffset\s+\d+[smhdwy]", "", expr)
    return {
        n
        for n in NAME.findall(expr)
        if n not in PROMQL_WORDS | MORE_WORDS and not n.isdigit() and "_" in n
    }


def test_every_series_in_the_catalogue_is_exported():
    wanted = set()
    for rb in load_catalog().all():
        for promql in [c.promql for c in rb.triage] + [s.promql for s in rb.golden_signals]:
            wanted |= metric_names(promql)
    assert "vllm:time_to_first_token_seconds_bucket" in wanted  # the parser finds names
    assert wanted >= REAL_EXPORTERS_ONLY, "drop names from REAL_EXPORTERS_ONLY once unused"
    exposed = exposed_sample_names()
    missing = sorted(wanted - exposed - REAL_EXPORTERS_ONLY)
    assert not missing, f"the catalogue queries series the simulator does not export: {missing}"
