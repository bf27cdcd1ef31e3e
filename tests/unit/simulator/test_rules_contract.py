"""Every series the alert rules query exists in the simulator's exposition, with the
labels the rules select on, so the rules and the test double cannot drift apart."""

import re
from pathlib import Path

import yaml

from simulator import metrics
from simulator.fleet import Fleet
from simulator.objects import new_cluster

RULES = Path(__file__).resolve().parents[3] / "deploy" / "prometheus" / "rules"
PROMQL_WORDS = {
    "sum", "max", "min", "avg", "count", "rate", "increase", "irate", "delta", "by", "on",
    "and", "or", "unless", "without", "group_left", "group_right", "ignoring", "bool",
    "histogram_quantile", "label_replace", "max_over_time", "min_over_time",
    "avg_over_time", "topk", "bottomk", "clamp_min", "clamp_max", "abs", "vector",
    "scalar", "absent", "le", "offset",
}  # fmt: skip
NAME = re.compile(r"(?<![\w:\"$.])([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?=[{\[(]|\s|$|\))")


def rule_metric_names() -> set[str]:
    names = set()
    for path in RULES.glob("*.yml"):
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                expr = re.sub(r'"[^"]*"', '""', rule["expr"])  # drop string literals
                expr = re.sub(r"\[[^\]]*\]", "", expr)  # and range selectors
                expr = re.sub(  # and label lists: by (...), on (...), group_left (...)
                    r"\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr
                )
                for name in NAME.findall(expr):
                    if name not in PROMQL_WORDS and not name.isdigit() and "_" in name:
                        names.add(name)
    return names


def exposed_sample_names() -> set[str]:
    fleet = Fleet(new_cluster(), seed=1, startup_delay_s=5)
    for slug in ("ecc-errors", "cuda-graph-capture"):
        fleet.inject(slug)
    for _ in range(30):
        fleet.tick()
    # Sample names as written on the wire, which is what Prometheus stores (the Python
    # parser would append `_total` to DCGM's counter, whose name already ends in TOTAL).
    text = metrics.render(fleet).decode()
    return set(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", text, flags=re.M))


def test_every_metric_in_the_rules_is_exported():
    wanted = rule_metric_names()
    assert "vllm:time_to_first_token_seconds_bucket" in wanted  # the parser finds names
    missing = sorted(wanted - exposed_sample_names())
    assert not missing, f"rules query series the simulator does not export: {missing}"
