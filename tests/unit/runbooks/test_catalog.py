"""The shipped catalogue: eight runbooks that agree with README "Runbooks", the alert rules
and the series the simulator (and the real exporters) export."""

import re
from pathlib import Path

import pytest
import yaml

from runbooks.action_kinds import ACTION_KINDS
from runbooks.catalog import bracket_problem, load_catalog, runbook_for_labels
from runbooks.placeholders import PLACEHOLDER, fill_command, fill_promql
from runbooks.schema import CATEGORIES

RULES = Path(__file__).resolve().parents[3] / "deploy" / "prometheus" / "rules"
# slug -> (alert, one-click fixes)
DESIGN = {
    "ttft-spike": ("VLLMHighTTFT", {"scale_lws", "update_gateway_limits"}),
    "nccl-hang": ("VLLMEngineStalled", {"restart_lws_group", "cordon_node"}),
    "prefix-cache-drop": ("VLLMPrefixCacheHitRateDrop", {"rollback_router_config"}),
    "retry-storm": ("VLLMRetryStorm", {"update_gateway_limits"}),
    "garbage-output": ("VLLMOutputQualityRegression", {"rollback_router_config"}),
    "ecc-errors": ("GPUECCErrors", {"cordon_node", "restart_lws_group"}),
    "cuda-graph-capture": ("VLLMCrashLooping", {"set_enforce_eager"}),
    "long-context-kv": ("VLLMKVCachePressure", {"update_gateway_limits", "scale_lws"}),
}
LABELS = {
    "namespace": "llm-serving",
    "lws": "vllm-chat",
    "pod": "vllm-chat-1",
    "node": "gpu-node-3",
}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_all_eight_runbooks_load(catalog):
    assert sorted(r.slug for r in catalog.all()) == sorted(DESIGN)
    assert set(catalog.categories) == set(CATEGORIES)
    for name, category in catalog.categories.items():
        assert category.examples, name
        assert category.defences, name


@pytest.mark.parametrize("slug", sorted(DESIGN))
def test_alerts_and_fixes_match_the_design(catalog, slug):
    alert, fixes = DESIGN[slug]
    rb = catalog.get(slug)
    assert rb.alerts == (alert,)
    assert catalog.for_alert(alert) is rb
    assert fixes <= {a.kind for a in rb.emergency_actions}
    recommended = {k for b in rb.decision_tree for k in b.recommended_actions}
    assert fixes <= recommended, "every one-click fix is recommended by some branch"
    assert set(recommended) <= set(ACTION_KINDS)
    assert rb.decision_tree[-1].when is None
    assert rb.long_term
    assert rb.golden_signals


def test_every_alert_rule_points_at_a_runbook_that_answers_it(catalog):
    rules = [
        rule
        for path in RULES.glob("*.yml")
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]
    assert rules
    for rule in rules:
        rb = runbook_for_labels({"alertname": rule["alert"], **rule["labels"]}, catalog)
        assert rb is not None, rule["alert"]
        assert rb.slug == rule["labels"]["runbook"]
        assert rule["alert"] in rb.alerts


def test_runbook_label_wins_over_alertname(catalog):
    assert runbook_for_labels({"runbook": "nccl-hang", "alertname": "VLLMHighTTFT"}).slug == (
        "nccl-hang"
    )
    # An unknown runbook label falls back to the alert name; neither known -> None.
    assert runbook_for_labels({"runbook": "nope", "alertname": "GPUECCErrors"}).slug == (
        "ecc-errors"
    )
    assert runbook_for_labels({"alertname": "Watchdog"}) is None
    assert runbook_for_labels({}) is None
    assert catalog.get("nope") is None


def _queries(rb):
    return [(f"triage.{c.id}", c.promql) for c in rb.triage] + [
        (f"golden_signals.{s.id}", s.promql) for s in rb.golden_signals
    ]


@pytest.mark.parametrize("slug", sorted(DESIGN))
def test_filled_promql_is_balanced_and_complete(catalog, slug):
    for where, template in _queries(catalog.get(slug)):
        promql = fill_promql(template, LABELS)
        assert not PLACEHOLDER.search(promql), where
        assert bracket_problem(promql) is None, where
        assert '="llm-serving"' in promql or '="gpu-node-3"' in promql, where


@pytest.mark.parametrize("slug", sorted(DESIGN))
def test_filled_commands_have_no_placeholders_left(catalog, slug):
    for cmd in catalog.get(slug).diagnostic_commands:
        assert not PLACEHOLDER.search(fill_command(cmd.command, LABELS)), cmd.title


def test_each_alert_carries_the_labels_its_checks_need(catalog):
    """A check needing {pod} or {node} belongs to a runbook whose alert has that label
    (in the rule's `by`/`on` clauses); otherwise the triage could only say "needs label"."""
    exprs = {
        rule["alert"]: rule["expr"]
        for path in RULES.glob("*.yml")
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
        if "alert" in rule
    }
    for rb in catalog.all():
        expr = exprs[rb.alerts[0]]
        for check in rb.triage:
            for name in check.requires:
                assert re.search(rf"\b{name}\b", expr), f"{rb.slug}.{check.id} needs {name}"
