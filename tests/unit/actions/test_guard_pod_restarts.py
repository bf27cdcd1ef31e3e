"""The guard's built-in error evidence of a change to some pods (actions/guard/pods.py):
restarts of the changed groups against the unchanged groups, from kube-state-metrics,
through the services and the stand-in Prometheus.

Before it, a scale-up whose new groups crash-loop had no engine series for those groups
(vLLM never ran long enough to report): its TTFT read "no data", the verdict "unknown",
and the broken groups stayed."""

import pytest
from django.test import Client

from actions.guard.models import GuardWatch
from actions.models import ActionRun
from tests.unit.actions.test_guard_evidence import (  # noqa: F401 (fixtures)
    LWS,
    _pods,
    _three_checks,
    answer,
    check,
    incident_with,
    messages,
    pod_rows,
    prom,
    rita,
    run_of,
    scale,
    states,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]


def signal(watch: GuardWatch, sid: str = "pod_restarts") -> dict:
    return next(s for s in watch.signals if s["id"] == sid)


def test_a_scale_up_whose_new_groups_crash_loop_is_undone(rita, prom):  # noqa: F811 (fixtures imported above)
    incident = incident_with("VLLMHighTTFT", "ttft-spike")
    answer(prom, ttft=2.0, errors=0.0, changed=2.0, others=2.0)
    run, watch = scale(incident, rita, 4, 6)
    assert signal(watch)["state"] == "unknown"  # built in beside the runbook's signals
    check(watch, settled=False)
    # The new groups' leaders restart and never become ready; vLLM on them never reports.
    answer(
        prom,
        ready=pod_rows(range(6), g4=0.0, g5=0.0),
        restarts=pod_rows(range(6), 0.0, g4=2.0, g5=3.0),
        changed=None,
        others=2.0,
    )
    for expected in ("watching", "watching", "breached"):
        watch = check(watch)
        assert watch.verdict == expected, watch.signals
    assert states(watch)["ttft_p99"] == "unknown"  # no data for the new groups' TTFT
    restarts = signal(watch)
    assert (restarts["changed"], restarts["unchanged"]) == (1.0, 0.0)
    assert watch.outcome == "undo_requested"
    assert watch.undo_run.params["replicas"] == 4
    reason = watch.verdict_reason
    assert (
        "the new groups 4-5 100% of groups restarting against the old groups 0-3 "
        "0% of groups restarting; the new groups 4-5 restart more than the old groups 0-3"
    ) in reason
    assert "changed 2 of 2 groups (vllm-chat-4 x4, vllm-chat-5 x6)" in reason
    assert "unchanged 0 of 4 groups" in reason
    assert "changed pods not ready: vllm-chat-4, vllm-chat-4-1, vllm-chat-5" in reason
    assert "in 3 checks in a row after settling" in reason
    (breach,) = [m for m in messages(incident.pk) if "breached" in m]
    assert "Restarting groups (changed pods against the unchanged ones)" in breach
    # The card shows the evidence: the changed groups' share against the others'.
    client = Client()
    client.force_login(rita)
    page = client.get(f"/runbooks/actions/{run.pk}/card/", HTTP_HX_REQUEST="true")
    html = page.content.decode()
    assert 'data-signal="pod_restarts"' in html
    assert 'data-signal-why="pod_restarts"' in html
    assert "vllm-chat-5 x6" in html


def test_old_groups_restarting_while_the_new_ones_are_fine_is_not_blamed(rita, prom):  # noqa: F811 (fixtures imported above)
    incident = incident_with("VLLMCrashLooping", "ttft-spike")
    answer(prom, ttft=1.0, errors=0.0, changed=1.0, others=1.0)
    run, watch = scale(incident, rita, 4, 6)
    check(watch, settled=False)
    answer(
        prom,
        ready=pod_rows(range(6), g0=0.0, g1=0.0),
        restarts=pod_rows(range(6), 0.0, g0=2.0, g1=5.0),
        changed=0.8,
        others=1.2,
    )
    for _ in range(4):
        watch = check(watch)
        assert watch.verdict == "watching", watch.signals
    restarts = signal(watch)
    assert restarts["state"] == "ok"
    assert (restarts["changed"], restarts["unchanged"]) == (0.0, 0.5)
    assert "unchanged 2 of 4 groups (vllm-chat-0 x4, vllm-chat-1 x10)" in restarts["message"]
    watch = check(watch, end=True)
    assert watch.verdict == "passed", watch.verdict_reason
    assert not ActionRun.objects.filter(undo_of=run).exists()


def test_a_pool_wide_crash_loop_is_the_outage_not_the_scale_up(rita, prom):  # noqa: F811 (fixtures imported above)
    incident = incident_with("VLLMCrashLooping", "ttft-spike")
    answer(prom, ttft=1.0, errors=0.0, changed=None, others=None)
    run, watch = scale(incident, rita, 4, 6)
    check(watch, settled=False)
    answer(prom, ready=pod_rows(range(6), 0.0), restarts=pod_rows(range(6), 2.0))
    for _ in range(4):
        watch = check(watch)
        assert watch.verdict == "watching", watch.signals
    assert signal(watch)["state"] == "ok"
    assert not ActionRun.objects.filter(undo_of=run).exists()


def test_without_kube_state_metrics_the_verdict_is_not_unknown(rita, prom):  # noqa: F811 (fixtures imported above)
    incident = incident_with("VLLMHighTTFT", "ttft-spike")
    answer(prom, ttft=1.0, errors=0.0, changed=1.0, others=1.0, ready=None, restarts=None)
    _run, watch = scale(incident, rita, 4, 6)
    check(watch, settled=False)
    watch = check(watch)
    assert signal(watch)["state"] == "unknown"
    assert "no data for the new groups 4-5" in signal(watch)["message"]
    watch = check(watch, end=True)
    assert watch.verdict == "passed", watch.verdict_reason


def test_a_roll_out_whose_rolled_groups_crash_loop_is_undone(rita, prom):  # noqa: F811 (fixtures imported above)
    """--enforce-eager taken off a pool whose image crashes in CUDA graph capture: the
    rolled groups (leaders and workers, found by revision) restart, the others do not."""
    incident = incident_with("VLLMCrashLooping", "cuda-graph-capture")
    old = {f"{LWS}-{g}{w}": "aaa" for g in range(4) for w in ("", "-1")}
    answer(prom, pods=_pods(old), ttft=0.8, errors=0.0)
    params = {"namespace": "llm-serving", "lws": LWS, "enabled": False}
    before = {"resource_version": "5", "state": {"enabled": True, "invocations": {}}}
    desired = {"enabled": False, "invocations": {}}
    _run, watch = run_of(
        incident, rita, "set_enforce_eager", params, before, desired, "cuda-graph-capture"
    )
    check(watch, settled=False)
    rolled = {**old, f"{LWS}-0": "bbb", f"{LWS}-0-1": "bbb"}
    answer(
        prom,
        pods=_pods(rolled),
        ready=pod_rows(range(4), g0=0.0),
        restarts=pod_rows(range(4), 0.0, g0=1.0),
        changed=None,
        others=0.8,
    )
    for expected in ("watching", "watching", "breached"):
        watch = check(watch)
        assert watch.verdict == expected, watch.signals
    restarts = signal(watch)
    assert (restarts["changed"], restarts["unchanged"]) == (1.0, 0.0)
    assert "the groups rolled out without --enforce-eager 100% of groups restarting" in (
        watch.verdict_reason
    )
    assert watch.undo_run.params["enabled"] is True
