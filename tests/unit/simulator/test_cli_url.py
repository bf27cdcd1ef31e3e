"""The simulator CLI finds the running stack (issue 25, item 9): --url, else
SIMULATOR_URL, else SIMULATOR_PORT, else the URL `make run` recorded under VAR_DIR,
else the default port."""

from __future__ import annotations

import pytest

import simulator.__main__ as cli
from console.localstack.records import SIMULATOR_URL_FILE, simulator_url_record


@pytest.fixture
def calls(monkeypatch):
    seen: list[str] = []

    def fake_call(url: str, method: str, path: str) -> dict:
        seen.append(url)
        return {"active_scenarios": [], "scenarios": []}

    monkeypatch.setattr(cli, "_call", fake_call)
    for name in ("SIMULATOR_URL", "SIMULATOR_PORT"):
        monkeypatch.delenv(name, raising=False)
    return seen


def test_simulator_port_from_the_environment(calls, monkeypatch, tmp_path):
    monkeypatch.setenv("VAR_DIR", str(tmp_path))
    monkeypatch.setenv("SIMULATOR_PORT", "9555")
    cli.main(["status"])
    assert calls == ["http://127.0.0.1:9555"]


def test_the_port_the_running_stack_recorded(calls, monkeypatch, tmp_path):
    monkeypatch.setenv("VAR_DIR", str(tmp_path))
    # What runstack writes when it starts the simulator on another port.
    simulator_url_record(tmp_path, "http://127.0.0.1:9777")
    cli.main(["status"])
    cli.main(["inject", "ttft-spike"])
    assert calls == ["http://127.0.0.1:9777"] * 2


def test_the_environment_beats_the_record_and_url_beats_both(calls, monkeypatch, tmp_path):
    monkeypatch.setenv("VAR_DIR", str(tmp_path))
    simulator_url_record(tmp_path, "http://127.0.0.1:9777")
    monkeypatch.setenv("SIMULATOR_PORT", "9555")
    cli.main(["reset"])
    cli.main(["clear", "--url", "http://127.0.0.1:9999"])
    monkeypatch.setenv("SIMULATOR_URL", "http://sim.example:1234")
    cli.main(["status", "--json"])
    assert calls == ["http://127.0.0.1:9555", "http://127.0.0.1:9999", "http://sim.example:1234"]


def test_nothing_set_nothing_recorded_is_the_default_port(calls, monkeypatch, tmp_path):
    monkeypatch.setenv("VAR_DIR", str(tmp_path))
    cli.main(["status"])
    assert calls == ["http://127.0.0.1:9400"]


def test_console_and_simulator_agree_on_where_the_record_is():
    assert cli.RECORD == SIMULATOR_URL_FILE
