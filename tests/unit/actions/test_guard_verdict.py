"""The guard's judgement of one signal (actions.guard.judge.judge) and the catalogue's
`guard:` block: what counts as a regression the change caused, and what is unknown."""

import math
import textwrap

import pytest

from actions.guard.judge import BREACH, OK, UNKNOWN, judge, signal_specs, threshold_text
from runbooks.catalog import DEFAULT_DIR, load_catalog, parse_runbook
from runbooks.schema import CatalogError


def spec(runbook: str, signal: str) -> dict:
    guard = load_catalog(DEFAULT_DIR).get(runbook).guard
    labels = {"namespace": "llm-serving", "lws": "vllm-chat"}
    return next(s for s in signal_specs(guard, labels) if s["id"] == signal)


def test_every_runbook_has_a_guard_with_the_three_kinds_of_signal():
    for runbook in load_catalog(DEFAULT_DIR).all():
        assert runbook.guard is not None, runbook.slug
        kinds = {s.type for s in runbook.guard.signals}
        assert kinds == {"availability", "latency", "quality"}, runbook.slug
        assert runbook.guard.interval_seconds <= runbook.guard.window_seconds


def test_quality_gate_breaches_only_when_the_change_made_it_cross():
    hit = spec("prefix-cache-drop", "hit_rate")
    state, said = judge(hit, 0.05, 0.82)
    message = said.english
    assert state == BREACH
    assert "Prefix-cache hit rate: 0.05 ratio crossed the threshold (< 0.3)" in message
    assert "0.82 before the change" in message
    # A rollback made in the middle of the outage: the gate was already crossed.
    state, said = judge(hit, 0.05, 0.06)
    message = said.english
    assert state == OK
    assert "already past < 0.3 before the change" in message
    assert judge(hit, 0.8, 0.82)[0] == OK


def test_availability_breaches_on_burn_rate_against_the_slo():
    avail = spec("ttft-spike", "availability")
    assert threshold_text(avail) == "burn rate above 14.4x of a 99.00% SLO"
    state, said = judge(avail, 0.2, 0.0)  # 20 % errors = 20x burn of a 1 % budget
    message = said.english
    assert state == BREACH
    assert "burn rate 20x (error ratio 20.00%)" in message
    assert judge(avail, 0.1, 0.0)[0] == OK  # 10x: within the limit
    assert judge(avail, 0.3, 0.25)[0] == OK  # burning before the change too


def test_latency_regression_is_against_the_value_before_the_change():
    ttft = spec("ttft-spike", "ttft_p99")
    state, said = judge(ttft, 1.6, 1.0)
    message = said.english
    assert state == BREACH
    assert "crossed 1.5 s (1.5x the 1 s before the change)" in message
    assert judge(ttft, 1.4, 1.0)[0] == OK
    # Tiny latencies: the floor (min_value 0.5 s) keeps noise from undoing a change.
    assert judge(ttft, 0.3, 0.1)[0] == OK


def test_no_value_or_no_baseline_is_unknown_never_a_breach():
    ttft = spec("ttft-spike", "ttft_p99")
    assert judge(ttft, None, 1.0)[0] == UNKNOWN
    assert judge(ttft, math.nan, 1.0)[0] == UNKNOWN
    state, said = judge(ttft, 9.0, None)
    message = said.english
    assert state == UNKNOWN
    assert "no value from before the change" in message
    assert judge(spec("prefix-cache-drop", "hit_rate"), None, 0.8)[0] == UNKNOWN
    # A quality gate past its threshold with no value from before the change is most
    # likely the outage the change fixes: unknown, never an undo.
    state, said = judge(spec("prefix-cache-drop", "hit_rate"), 0.05, None)
    message = said.english
    assert state == UNKNOWN
    assert "no value from before the change to compare" in message
    # No error series before the change means no errors: availability still breaches.
    assert judge(spec("ttft-spike", "availability"), 0.2, None)[0] == BREACH


def test_signals_are_filled_like_triage_and_say_which_label_is_missing():
    guard = load_catalog(DEFAULT_DIR).get("prefix-cache-drop").guard
    (filled, *_) = signal_specs(guard, {"namespace": 'a"b', "lws": "vllm-chat"})
    assert 'namespace="a\\"b"' in filled["promql"]
    (partial, *_) = signal_specs(guard, {"namespace": "llm-serving"})
    assert partial["needs"] == ["lws"]


GOOD = """\
guard:
  window_seconds: 300
  interval_seconds: 30
  signals:
    - id: hit_rate
      title: Hit rate
      type: quality
      promql: sum(rate(x{namespace="{namespace}"}[1m]))
      unit: ratio
      comparator: "<"
      threshold: 0.3
"""


def _runbook_with(tmp_path, guard_text: str):
    src = (DEFAULT_DIR / "prefix-cache-drop.yaml").read_text()
    body = src[: src.index("guard:")] + textwrap.dedent(guard_text)
    path = tmp_path / "prefix-cache-drop.yaml"
    path.write_text(body)
    return path


def test_a_valid_guard_block_parses(tmp_path):
    rb = parse_runbook(_runbook_with(tmp_path, GOOD))
    assert rb.guard.window_seconds == 300
    assert rb.guard.signals[0].requires == ("namespace",)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("threshold: 0.3", "max_ratio: 1.5"), "guard.signals[0].threshold: required"),
        (("type: quality", "type: latency"), "guard.signals[0].max_ratio: required"),
        (("window_seconds: 300", "window_seconds: 10"), "guard.window_seconds: expected 60"),
        (("interval_seconds: 30", "interval_seconds: 600"), "must not be longer than window"),
        (('"{namespace}"', '"{cluster}"'), "unknown placeholder {cluster}"),
        (('comparator: "<"', 'comparator: "=="'), "guard.signals[0].comparator: expected one"),
    ],
)
def test_a_broken_guard_block_names_the_file_and_field(tmp_path, change, message):
    with pytest.raises(CatalogError, match=r"prefix-cache-drop\.yaml") as exc:
        parse_runbook(_runbook_with(tmp_path, GOOD.replace(*change)))
    assert message in str(exc.value)
