"""`make run`'s generated Prometheus and Alertmanager configs: demo timings by default,
shorter ones from the environment (the drill suite compresses time), and a bad value is
refused naming the variable instead of a Prometheus that will not start."""

from pathlib import Path

import pytest
import yaml

from console.localstack.monitoring import Ports, alertmanager_config, prometheus_config


def test_demo_timings_by_default(monkeypatch):
    for name in ("PROMETHEUS_SCRAPE_INTERVAL", "ALERTMANAGER_GROUP_WAIT"):
        monkeypatch.delenv(name, raising=False)
    prom = yaml.safe_load(prometheus_config(Ports()))
    am = yaml.safe_load(alertmanager_config(Ports(), Path("/tmp/token")))
    assert prom["global"]["scrape_interval"] == "5s"
    assert am["route"]["group_wait"] == "5s"
    assert am["route"]["group_interval"] == "10s"


def test_the_environment_shortens_the_loop(monkeypatch):
    monkeypatch.setenv("PROMETHEUS_SCRAPE_INTERVAL", "2s")
    monkeypatch.setenv("PROMETHEUS_EVALUATION_INTERVAL", "1s")
    monkeypatch.setenv("ALERTMANAGER_GROUP_WAIT", "500ms")
    monkeypatch.setenv("ALERTMANAGER_GROUP_INTERVAL", "2s")
    prom = yaml.safe_load(prometheus_config(Ports()))
    am = yaml.safe_load(alertmanager_config(Ports(), Path("/tmp/token")))
    assert prom["global"] == {**prom["global"], "scrape_interval": "2s",
                              "evaluation_interval": "1s"}  # fmt: skip
    assert (am["route"]["group_wait"], am["route"]["group_interval"]) == ("500ms", "2s")


def test_a_bad_duration_names_the_variable(monkeypatch):
    monkeypatch.setenv("PROMETHEUS_SCRAPE_INTERVAL", "2 seconds")
    with pytest.raises(ValueError, match="PROMETHEUS_SCRAPE_INTERVAL='2 seconds'"):
        prometheus_config(Ports())
