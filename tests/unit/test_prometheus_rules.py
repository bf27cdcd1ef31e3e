"""Prometheus config and alert rules: promtool checks and the runbook contract.

The alerts are what turns a sick vLLM fleet into an incident with the right runbook, so a
rule that does not parse, never fires or carries the wrong labels is a silent outage of
the console. `promtool test rules` runs the unit tests in deploy/prometheus/tests/.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import need_service

ROOT = Path(__file__).resolve().parents[2]
PROM_DIR = ROOT / "deploy" / "prometheus"
RULE_FILES = sorted((PROM_DIR / "rules").glob("*.yml"))
TEST_FILES = sorted((PROM_DIR / "tests").glob("*.yml"))

# alert -> (runbook slug, severity chosen for it).
EXPECTED = {
    "VLLMHighTTFT": ("ttft-spike", "critical"),
    "VLLMEngineStalled": ("nccl-hang", "critical"),
    "VLLMPrefixCacheHitRateDrop": ("prefix-cache-drop", "warning"),
    "VLLMRetryStorm": ("retry-storm", "critical"),
    "VLLMOutputQualityRegression": ("garbage-output", "critical"),
    "GPUECCErrors": ("ecc-errors", "warning"),
    "VLLMCrashLooping": ("cuda-graph-capture", "critical"),
    "VLLMKVCachePressure": ("long-context-kv", "warning"),
}

# prometheus_client counters are exposed with `_total`; the bare name matches nothing.
VLLM_COUNTERS = (
    "num_preemptions",
    "prompt_tokens",
    "generation_tokens",
    "request_success",
    "prefix_cache_queries",
    "prefix_cache_hits",
)
BARE_COUNTER = re.compile(rf"vllm:(?:{'|'.join(VLLM_COUNTERS)})(?![_a-zA-Z0-9])")


def promtool(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("promtool")
    need_service(
        "promtool",
        exe is not None,
        "install the prometheus package (Debian/Ubuntu: apt-get install prometheus)",
    )
    return subprocess.run(
        [exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def assert_ok(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, (
        f"{' '.join(result.args)} exited {result.returncode}\n"
        f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
    )


def alert_rules() -> list[dict]:
    rules = []
    for path in RULE_FILES:
        doc = yaml.safe_load(path.read_text())
        for group in doc["groups"]:
            rules += [r for r in group["rules"] if "alert" in r]
    return rules


def rule_tests() -> list[dict]:
    cases = []
    for path in TEST_FILES:
        for test in yaml.safe_load(path.read_text())["tests"]:
            cases += test.get("alert_rule_test", [])
    return cases


def test_files_exist():
    assert RULE_FILES, "no rule files in deploy/prometheus/rules/"
    assert TEST_FILES, "no promtool tests in deploy/prometheus/tests/"


def test_promtool_check_config():
    # rule_files in prometheus.yml is relative (rules/*.yml), so this also checks the rules.
    assert_ok(promtool("check", "config", str(PROM_DIR / "prometheus.yml")))


def test_promtool_check_rules():
    assert_ok(promtool("check", "rules", *map(str, RULE_FILES)))


def test_promtool_unit_tests_pass():
    assert_ok(promtool("test", "rules", *map(str, TEST_FILES)))


def test_exactly_the_eight_alerts_of_design_4_2():
    names = [r["alert"] for r in alert_rules()]
    assert sorted(names) == sorted(EXPECTED), names


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_alert_carries_runbook_severity_and_annotations(name):
    (rule,) = [r for r in alert_rules() if r["alert"] == name]
    slug, severity = EXPECTED[name]
    assert rule["labels"]["runbook"] == slug
    assert rule["labels"]["severity"] == severity
    assert severity in {"critical", "warning", "info"}
    annotations = rule["annotations"]
    assert annotations["summary"].strip()
    assert annotations["description"].strip()
    assert "{{ $labels." in annotations["summary"] + annotations["description"]
    assert "{{ $value" in annotations["description"]
    assert annotations["runbook_url"] == f"/runbooks/{slug}/"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_expression_queries_vllm_counters_with_total_suffix(name):
    (rule,) = [r for r in alert_rules() if r["alert"] == name]
    assert not BARE_COUNTER.search(rule["expr"]), rule["expr"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_alert_is_tested_firing_with_namespace_and_lws_and_silent(name):
    cases = [c for c in rule_tests() if c["alertname"] == name]
    firing = [a for c in cases for a in c["exp_alerts"]]
    assert firing, f"no promtool test where {name} fires"
    assert any(c["exp_alerts"] == [] for c in cases), f"no promtool test where {name} is silent"
    slug, severity = EXPECTED[name]
    for alert in firing:
        labels = alert["exp_labels"]
        assert labels["runbook"] == slug
        assert labels["severity"] == severity
        assert labels["namespace"]
        assert labels["lws"]
        assert alert["exp_annotations"]["runbook_url"] == f"/runbooks/{slug}/"
