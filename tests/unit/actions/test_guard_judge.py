"""The guard's pure parts (issue 25, item 1): each kind's evidence (guard_split), the
narrowed queries, one check's judgement (judge.step) and the catalogue's new keys."""

import pytest

from actions.guard import judge
from actions.guard.evidence import narrowed
from actions.kinds import Plan, Snapshot, kind_for
from runbooks.catalog import DEFAULT_DIR, load_catalog, parse_runbook
from runbooks.schema import CatalogError
from tests.unit.actions.test_guard_verdict import GOOD, _runbook_with, spec

NS = {"namespace": "llm-serving", "lws": "vllm-chat"}


def split(kind, params, before_state, desired, identity=None):
    before = Snapshot("1", before_state, identity or {})
    return kind_for(kind).guard_split(params, before, Plan(desired, "", ""))


def test_each_kind_says_what_evidence_its_change_needs():
    up = split("scale_lws", {**NS, "replicas": 6}, {"replicas": 4}, {"replicas": 6})
    assert up.changed == ("vllm-chat-4", "vllm-chat-5")
    assert (up.what, up.others) == ("the new groups 4-5", "the old groups 0-3")
    assert split("scale_lws", {**NS, "replicas": 4}, {"replicas": 6}, {"replicas": 4}) is None
    restart = split(
        "restart_lws_group", {**NS, "group": 2}, {"group": 2},
        {"group": 2, "leader_pod": "vllm-chat-2", "previous_uid": "u"},
    )  # fmt: skip
    assert restart.changed == ("vllm-chat-2",)
    leaders = [{"lws": "vllm-chat", "group": 3, "pod": "vllm-chat-3", "uid": "u"}]
    cordon = split(
        "cordon_node",
        {"node": "gpu-4", "cordon": True, "reason": "ecc", "restart_groups": True,
         "namespace": "llm-serving"},
        {"unschedulable": False, "taint": None, "lws_pods_on_node": ["vllm-chat-3"]},
        {"unschedulable": True, "taint": {}, "lws_pods_on_node": []},
        {"leaders": leaders},
    )  # fmt: skip
    assert cordon.changed == ("vllm-chat-3",)
    plain = split(
        "cordon_node", {"node": "gpu-4", "cordon": True, "reason": "ecc"},
        {"unschedulable": False, "taint": None}, {"unschedulable": True, "taint": {}},
    )  # fmt: skip
    assert plain is None  # moves no running pod: fleet-wide
    eager = split("set_enforce_eager", {**NS, "enabled": True}, {"enabled": False},
                  {"enabled": True})  # fmt: skip
    assert eager.by_revision
    router = {"namespace": "llm-serving", "configmap": "vllm-router-config", "revision": "1"}
    assert split("rollback_router_config", router, {"data": {}}, {"data": {"a": "b"}}) is None


def test_a_pod_scoped_query_is_narrowed_beside_its_lws_matcher():
    ttft = spec("ttft-spike", "ttft_p99")
    q = narrowed(ttft["promql"], ["vllm-chat-4", "vllm-chat-5"])
    assert 'lws="vllm-chat", pod=~"vllm-chat-4|vllm-chat-5"}' in q
    assert 'pod!~"vllm-chat-4|vllm-chat-5"' in narrowed(
        ttft["promql"], ["vllm-chat-5", "vllm-chat-4"], others=True
    )


def reading(**kw):
    return {"mode": judge.TREND, "error": "", **kw}


def test_settling_readings_are_shown_and_never_count():
    ttft = spec("ttft-spike", "ttft_p99")
    out = judge.step(ttft, reading(value=9.0, baseline=1.0, settling=True), confirm=1)
    assert out["state"] == judge.SETTLING
    assert judge.verdict([out]) == judge.OK


def test_a_split_breach_needs_the_changed_pods_worse_than_the_others():
    ttft = spec("ttft-spike", "ttft_p99")
    words = {"mode": judge.SPLIT, "what": "the new groups 4-5", "others": "the old groups"}
    ok = judge.step(ttft, reading(**words, changed=0.6, unchanged=9.0), confirm=1)
    assert ok["state"] == judge.OK
    bad = ttft
    for _ in range(2):
        bad = judge.step(bad, reading(**words, changed=3.0, unchanged=1.0), confirm=2)
    assert bad["counts"]
    assert judge.verdict([bad]) == judge.BREACH
    avail = spec("ttft-spike", "availability")
    ctx = judge.step(avail, reading(mode=judge.CONTEXT, value=0.7, what="the new groups"), 1)
    assert ctx["state"] == judge.CONTEXT
    assert not ctx["counts"]


def test_a_trend_breaches_when_it_lasts_and_does_not_improve():
    ttft = spec("ttft-spike", "ttft_p99")
    rising = falling = ttft
    for r, f in ((3.0, 4.0), (3.5, 3.0), (4.0, 2.0)):
        rising = judge.step(rising, reading(value=r, baseline=1.0), confirm=3)
        falling = judge.step(falling, reading(value=f, baseline=1.0), confirm=3)
    assert rising["counts"]
    assert falling["state"] == judge.IMPROVING
    assert not falling["counts"]
    excused = judge.step(ttft, reading(value=9.0, baseline=1.0, excuse="X fired"), confirm=1)
    assert excused["state"] == judge.EXCUSED


def test_the_catalogue_marks_pod_scoped_signals_and_names_their_alerts():
    guard = load_catalog(DEFAULT_DIR).get("ttft-spike").guard
    assert guard.settle_seconds == 120
    by_id = {s.id: s for s in guard.signals}
    assert by_id["ttft_p99"].scope == "pod"
    assert by_id["availability"].scope == "gateway"
    assert "VLLMRetryStorm" in by_id["availability"].alerts


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("  interval_seconds: 30\n", "  interval_seconds: 30\n  settle_seconds: 300\n"),
         "guard.settle_seconds: must be shorter"),
        (("      unit: ratio\n", "      unit: ratio\n      scope: pod\n"),
         'a pod-scoped signal selects with lws="{lws}"'),
        (("      unit: ratio\n", "      unit: ratio\n      scope: node\n"),
         "guard.signals[0].scope: expected one of"),
    ],
)  # fmt: skip
def test_the_new_guard_keys_are_checked(tmp_path, change, message):
    path = _runbook_with(tmp_path, GOOD.replace(*change))
    with pytest.raises(CatalogError) as exc:
        parse_runbook(path)
    assert message in str(exc.value)
