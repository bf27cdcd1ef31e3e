"""The console's own alert rules (deploy/prometheus/console-rules): they parse, their
promtool tests pass, every alert is tested firing and silent, and they only read series
console/metrics/series.py really exports (a renamed metric must not leave an alert blind)."""

import re
from pathlib import Path

import yaml

from tests.unit.test_prometheus_rules import assert_ok, promtool

ROOT = Path(__file__).resolve().parents[3]
RULES = ROOT / "deploy" / "prometheus" / "console-rules" / "console.yml"
TESTS = ROOT / "deploy" / "prometheus" / "tests" / "console-test.yml"
EXPECTED = {"ConsoleWebhook5xx", "ConsoleNoWorker", "ConsoleQueueGrowing", "ConsoleIngestSlow",
            "ConsoleMetricsAbsent"}  # fmt: skip


def alerts() -> list[dict]:
    return [
        rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]
    ]


def test_promtool_checks_and_unit_tests_pass():
    assert_ok(promtool("check", "rules", str(RULES)))
    assert_ok(promtool("test", "rules", str(TESTS)))


def test_the_alerts_and_their_routing_label():
    assert {rule["alert"] for rule in alerts()} == EXPECTED
    for rule in alerts():
        # Routed to a pager by this label, never to the console's own webhook.
        assert rule["labels"]["service"] == "incident-console"
        assert rule["labels"]["severity"] in ("critical", "warning")
        assert rule["annotations"]["summary"]
        assert rule["annotations"]["description"]


def test_each_alert_is_tested_firing_and_silent():
    cases = [c for t in yaml.safe_load(TESTS.read_text())["tests"] for c in t["alert_rule_test"]]
    for name in EXPECTED:
        mine = [c for c in cases if c["alertname"] == name]
        assert any(c["exp_alerts"] for c in mine), f"{name} is never tested firing"
        assert any(not c["exp_alerts"] for c in mine), f"{name} is never tested silent"


def test_rules_read_only_series_the_console_exports(client, db):
    exported = set(re.findall(r"^(console_\w+?)(?:\{| )", client.get("/metrics").content.decode(),
                              re.MULTILINE))  # fmt: skip
    # Counters gain _total, histograms _bucket/_sum/_count (all exported once observed).
    exported |= {"console_webhook_requests_total", "console_ingest_duration_seconds_bucket"}
    used = {name for rule in alerts() for name in re.findall(r"\bconsole_\w+", rule["expr"])}
    assert used <= exported, used - exported


def test_the_fleet_rules_directory_holds_no_console_alert():
    """rules/ is what the console ingests (and what readiness checks against runbooks)."""
    fleet = (ROOT / "deploy" / "prometheus" / "rules").glob("*.yml")
    assert not any("console_" in path.read_text() for path in fleet)
